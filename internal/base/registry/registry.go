// Package registry holds the named plug-ins that packages register when they are imported: the Go
// functions of the gofunc subject, the monitor's optional sources. As with database/sql's drivers,
// a name registered twice is a programming error and panics.
package registry

import (
	"maps"
	"slices"
	"sync"
)

// Map is a set of named values, safe for concurrent use. Create it with New.
type Map[T any] struct {
	what string // says whose registry it is in the panic on a duplicate name
	mu   sync.RWMutex
	m    map[string]T
}

// New returns an empty Map; what starts the panic message on a duplicate name ("gofunc:").
func New[T any](what string) *Map[T] {
	return &Map[T]{what: what, m: map[string]T{}}
}

// Add registers v under name. It panics when name is already registered.
func (r *Map[T]) Add(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[name]; dup {
		panic(r.what + " " + name + " registered twice")
	}
	r.m[name] = v
}

// Get returns the value registered under name, and whether there is one.
func (r *Map[T]) Get(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.m[name]
	return v, ok
}

// Names returns the registered names, sorted.
func (r *Map[T]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.m))
}
