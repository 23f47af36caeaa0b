package result_test

import (
	"fmt"
	"log"
	"os"
	"time"

	"github.com/inferbench/inferbench/result"
)

// A program reads a run folder (or its run.json) with Load: the scenarios, their metrics with
// unit and direction, and the typed sections of Extra. Save writes run.json and summary.csv.
func ExampleLoad() {
	dir, err := os.MkdirTemp("", "inferbench-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := &result.Run{
		Schema:    result.Schema,
		ID:        "20260102_030405-example",
		StartedAt: at,
		Scenarios: []result.Scenario{{
			Benchmark:  "tokenize",
			Scenario:   "default",
			Subject:    "gofunc",
			Status:     result.StatusOK,
			Iterations: result.Iterations{Warmup: 2, Measured: 5},
			Metrics: map[string]result.Metric{
				"latency_ms": result.SampleMetric("latency_ms", []float64{1.2, 1.1, 1.3, 1.2, 1.4}),
			},
		}},
	}
	run.Tally()
	if err := result.Save(dir, run); err != nil {
		log.Fatal(err)
	}

	r, err := result.Load(dir)
	if err != nil {
		log.Fatal(err)
	}
	for _, sc := range r.Scenarios {
		m := sc.Metrics["latency_ms"]
		median, _ := m.Center()
		fmt.Printf("%s: %s, %d measured, median %.1f %s (%s is better), p95 %.2f\n",
			sc.ID(), sc.Status, sc.Iterations.Measured, median, m.Unit, m.Better, m.Summary.P95)
	}
	fmt.Printf("%d of %d scenarios succeeded\n", r.Summary.Succeeded, r.Summary.Total)
	// Output:
	// tokenize/default: ok, 5 measured, median 1.2 ms (lower is better), p95 1.38
	// 1 of 1 scenarios succeeded
}
