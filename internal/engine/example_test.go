package engine_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// sleeper is a subject whose calls take the scenario's "sleep_ms" parameter.
type sleeper struct{ d time.Duration }

func (s sleeper) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	start := time.Now()
	time.Sleep(s.d)
	return subject.Observation{Start: start, End: time.Now()}, nil
}

func (sleeper) Close() error { return nil }

func init() {
	subject.Register(subject.Kind{
		Name: "example-sleep",
		Open: func(ctx context.Context, s subject.Spec) (subject.Subject, error) {
			return sleeper{time.Duration(s.Params.Int("sleep_ms", 1)) * time.Millisecond}, nil
		},
	})
}

// An Engine runs scenarios without the rest of a run (no folder, store, monitors or verdict):
// each scenario's subject is opened, driven by its load and closed, and its calls become the
// metrics of a result.Scenario. WithLoad overrides every definition's load settings.
func ExampleEngine_Run() {
	bench := &suite.Benchmark{
		Name: "sleep", Kind: "example-sleep",
		Axes: []suite.Axis{{Name: "sleep_ms", Values: []any{1, 2}}},
	}
	warmup, iterations := 1, 20
	e := engine.New(engine.WithLoad(load.Config{WarmupIterations: &warmup, MeasurementIterations: &iterations}))
	defer e.Close()

	err := e.Run(context.Background(), bench.Expand(nil), func(r result.Scenario) {
		median, _ := r.Metrics["latency_ms"].Center()
		sleep := r.Params["sleep_ms"].(int)
		fmt.Printf("%s: %s, %d measured, median >= %d ms: %v\n", r.ID(), r.Status, r.Iterations.Measured, sleep, median >= float64(sleep))
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// sleep/sleep_ms=1: ok, 20 measured, median >= 1 ms: true
	// sleep/sleep_ms=2: ok, 20 measured, median >= 2 ms: true
}
