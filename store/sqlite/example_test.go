package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
	_ "github.com/inferbench/inferbench/store/sqlite"
)

// Importing the package registers it with store.Open for the schemes sqlite: and file:, which
// opens (and creates, with its folder) the SQLite file a location names: "sqlite:PATH", or a
// plain path, relative to Params.Dir. A run is stored once: a second Put of its id is ErrExists.
func Example() {
	dir, err := os.MkdirTemp("", "inferbench-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	st, err := store.Open(ctx, store.Params{URL: "sqlite:.inferbench/history.db", Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	run := &result.Run{
		Schema: result.Schema, ID: "20260301_120000-example", StartedAt: at,
		Scenarios: []result.Scenario{{
			Benchmark: "tokenize", Scenario: "default", Subject: "gofunc", Status: result.StatusOK,
			Metrics: map[string]result.Metric{"latency_ms": result.SampleMetric("latency_ms", []float64{1.2, 1.1, 1.3})},
		}},
	}
	run.Tally()
	if err := st.Put(ctx, run); err != nil {
		log.Fatal(err)
	}
	err = st.Put(ctx, run)
	fmt.Println("stored twice:", errors.Is(err, store.ErrExists))

	infos, err := st.List(ctx, store.Filter{Benchmark: "tokenize"})
	if err != nil {
		log.Fatal(err)
	}
	for _, info := range infos {
		fmt.Printf("%s: %d scenario(s), %d succeeded\n", info.ID, info.Scenarios, info.Summary.Succeeded)
	}
	// Output:
	// stored twice: true
	// 20260301_120000-example: 1 scenario(s), 1 succeeded
}
