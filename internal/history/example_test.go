package history_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/inferbench/inferbench/internal/history"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/store"
	_ "github.com/inferbench/inferbench/store/sqlite"
)

// Query reads one metric of the stored runs as a series per scenario and finds where it shifted:
// here the median latency stepped from about 10 ms to about 12 ms at the seventh run.
func ExampleQuery() {
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
	for i, median := range []float64{10.1, 9.9, 10.0, 10.2, 9.8, 10.0, 12.1, 11.9, 12.0, 12.2, 11.8, 12.0} {
		at := day.AddDate(0, 0, i)
		r := &result.Run{
			Schema: result.Schema, ID: fmt.Sprintf("run-%02d", i+1), StartedAt: at,
			Scenarios: []result.Scenario{{
				Benchmark: "resnet50", Scenario: "default", Subject: "gofunc", Status: result.StatusOK,
				Metrics: map[string]result.Metric{"latency_ms": result.SampleMetric("latency_ms", []float64{median - 0.1, median, median + 0.1})},
			}},
		}
		r.Tally()
		if err := st.Put(ctx, r); err != nil {
			log.Fatal(err)
		}
	}

	series, err := history.Query(ctx, st, store.Query{Benchmark: "resnet50", Metric: "latency_ms"}, stats.ChangeOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range series {
		fmt.Printf("%s %s: %d runs\n", s.Name(), s.Metric, len(s.Points))
		for _, c := range s.ChangePoints {
			fmt.Printf("  shift at %s (%s): %.1f -> %.1f ms (%+.0f%%)\n", c.RunID, c.Time.Format(time.DateOnly), c.Before, c.After, 100*c.Magnitude)
		}
	}
	// Output:
	// resnet50/default latency_ms: 12 runs
	//   shift at run-07 (2026-03-07): 10.0 -> 12.0 ms (+20%)
}
