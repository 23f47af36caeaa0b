package load

import (
	"context"
	"sort"
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
	drivers   = map[string]Driver{ModeSingle: driveSingle}
)

// RegisterDriver adds a load mode.
func RegisterDriver(mode string, d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	drivers[mode] = d
}

// Lookup returns the driver for a configuration's mode.
func Lookup(c Config) (Driver, bool) { return lookupDriver(c.mode()) }

func lookupDriver(mode string) (Driver, bool) {
	driversMu.RLock()
	defer driversMu.RUnlock()
	d, ok := drivers[mode]
	return d, ok
}

func driverNames() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	var names []string
	for n := range drivers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
