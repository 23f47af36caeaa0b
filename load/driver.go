package load

import (
	"context"
	"slices"
	"sync"

	"github.com/inferbench/inferbench/subject"
)

// Phase tells a Sink whether a call was warm-up or measured.
type Phase int

// Phases.
const (
	Warmup Phase = iota
	Measure
)

// Sink receives every call a driver makes, in completion order. Observe may be called from
// several goroutines by concurrent drivers; implementations synchronise.
type Sink interface {
	// Begin marks the start of a phase: the engine starts its monitors at Begin(Measure).
	Begin(p Phase)
	// Observe records one completed call.
	Observe(p Phase, o subject.Observation, err error)
}

// Driver runs a subject under one load configuration until it is done or ctx is cancelled. A
// cancelled ctx means "stop after the calls in flight" and is not an error.
type Driver func(ctx context.Context, s subject.Subject, c Config, sink Sink) error

var (
	driversMu sync.RWMutex
	drivers   = map[string]Driver{}
)

// builtinModes are the modes whose drivers a run registers (they come with package run): a
// configuration naming one is valid where the drivers are not linked too.
var builtinModes = []string{ModeSingle, ModeConcurrency, ModeRate, ModeSweep, ModeOffline, ModeCapacity, ModeSessions, ModeTrace}

// RegisterDriver adds a load mode, or replaces the driver of one.
func RegisterDriver(mode string, d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	drivers[mode] = d
}

// Lookup returns the driver for a configuration's mode. The built-in modes' drivers are
// registered by package run's engine: a program that drives a subject itself imports run (its
// import alone registers them).
func Lookup(c Config) (Driver, bool) {
	driversMu.RLock()
	defer driversMu.RUnlock()
	d, ok := drivers[c.mode()]
	return d, ok
}

// knownMode reports whether mode is a built-in or a registered one.
func knownMode(mode string) bool {
	driversMu.RLock()
	defer driversMu.RUnlock()
	_, ok := drivers[mode]
	return ok || slices.Contains(builtinModes, mode)
}

// modeNames returns the built-in and registered modes, sorted.
func modeNames() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	names := slices.Clone(builtinModes)
	for n := range drivers {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}
