package store_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
	_ "github.com/inferbench/inferbench/store/sqlite" // registers sqlite: (store/postgres: postgres://)
)

// latencyRun is a run of one scenario whose latency samples are base plus a small spread.
func latencyRun(id string, at time.Time, base float64) *result.Run {
	xs := make([]float64, 20)
	for i := range xs {
		xs[i] = base + float64(i%5)*0.1
	}
	r := &result.Run{
		Schema: result.Schema, ID: id, StartedAt: at, FinishedAt: at.Add(time.Minute),
		Scenarios: []result.Scenario{{
			Benchmark: "resnet50", Scenario: "batch_size=8", Subject: "gofunc", Status: result.StatusOK,
			Params:  map[string]any{"batch_size": 8},
			Metrics: map[string]result.Metric{"latency_ms": result.SampleMetric("latency_ms", xs)},
		}},
	}
	r.Tally()
	return r
}

// Open picks a backend by the location's scheme (a backend package registers itself when
// imported): runs go in with Put, are named with SetBaseline, found again with Resolve
// ("latest", "baseline:NAME", an id), and a metric's history comes back with History.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "inferbench-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	st, err := store.Open(ctx, store.Params{URL: "sqlite:history.db", Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, base := range []float64{10, 10.2, 9.9, 12.5} {
		if err := st.Put(ctx, latencyRun(fmt.Sprintf("run-%d", i+1), day.AddDate(0, 0, i), base)); err != nil {
			log.Fatal(err)
		}
	}
	if err := st.SetBaseline(ctx, store.Baseline{Name: "main", RunID: "run-2", CreatedAt: day}); err != nil {
		log.Fatal(err)
	}

	for _, ref := range []string{"latest", "baseline:main"} {
		r, err := store.Resolve(ctx, st, ref)
		if err != nil {
			log.Fatal(err)
		}
		median, _ := r.Scenarios[0].Metrics["latency_ms"].Center()
		fmt.Printf("%s is %s: median %.1f ms\n", ref, r.ID, median)
	}

	pts, err := st.History(ctx, store.Query{Benchmark: "resnet50", Metric: "latency_ms.p95"})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range pts {
		fmt.Printf("%s %s %.2f\n", p.Time.Format(time.DateOnly), p.RunID, p.Value)
	}
	// Output:
	// latest is run-4: median 12.7 ms
	// baseline:main is run-2: median 10.4 ms
	// 2026-03-01 run-1 10.40
	// 2026-03-02 run-2 10.60
	// 2026-03-03 run-3 10.30
	// 2026-03-04 run-4 12.90
}
