package load_test

import (
	"context"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/inferbench/inferbench/load"
	_ "github.com/inferbench/inferbench/run" // registers the built-in modes' drivers
	"github.com/inferbench/inferbench/subject"
)

// sleeper is a subject whose every call takes about a millisecond.
type sleeper struct{}

func (sleeper) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	start := time.Now()
	time.Sleep(time.Millisecond)
	return subject.Observation{Start: start, End: time.Now()}, nil
}

func (sleeper) Close() error { return nil }

// counter is a Sink that counts calls by phase; drivers call it from several goroutines.
type counter struct {
	mu    sync.Mutex
	calls map[load.Phase]int
}

func (c *counter) Begin(p load.Phase) {}

func (c *counter) Observe(p load.Phase, o subject.Observation, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[p]++
}

// A Config is a definition's `load:` block; Lookup picks the driver for its mode (single,
// concurrency, rate, sweep, ...), which makes the calls and hands each observation to a Sink.
// The engine's Sink turns them into metrics; this one counts them. The built-in modes' drivers
// are registered by package run.
func ExampleLookup() {
	warmup, iterations := 4, 40
	cfg := load.Config{
		Mode:                  load.ModeConcurrency,
		Concurrency:           4,
		WarmupIterations:      &warmup,
		MeasurementIterations: &iterations,
	}
	drive, ok := load.Lookup(cfg)
	if !ok {
		log.Fatalf("no driver for mode %q", cfg.Mode)
	}
	sink := &counter{calls: map[load.Phase]int{}}
	if err := drive(context.Background(), sleeper{}, cfg, sink); err != nil {
		log.Fatal(err)
	}
	fmt.Println("warm-up calls:", sink.calls[load.Warmup])
	fmt.Println("measured calls:", sink.calls[load.Measure])
	// Output:
	// warm-up calls: 4
	// measured calls: 40
}
