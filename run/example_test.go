package run_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/kind/gofunc"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/store"
	"github.com/inferbench/inferbench/suite"
)

// A Go program benchmarks one of its functions with the whole product: resource monitors beside
// it, the run recorded in a history store, and a verdict against a baseline and a budget.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "inferbench-example-")
	defer os.RemoveAll(dir)

	// The function under test, and a benchmark of it (no YAML needed).
	gofunc.Register("example/checksum", func(ctx context.Context) error {
		var sum byte
		for i := range 4096 {
			sum += byte(i)
		}
		_ = sum
		return nil
	})
	// Each iteration calls the function for 1 ms (iteration_time; 20 ms by default, which would
	// make its two runs take 12 s), reporting the time per call.
	warmup, iterations, iterationTime := 5, 300, time.Millisecond
	bench := &suite.Benchmark{
		Name: "checksum", Kind: "gofunc", Config: &gofunc.Config{Func: "example/checksum", IterationTime: &iterationTime},
		File: "example_test.go", Dir: dir,
		Load: load.Config{WarmupIterations: &warmup, MeasurementIterations: &iterations},
	}

	var thresholds compare.Thresholds
	_ = thresholds.Set("latency=1000") // this example's two runs differ by noise alone
	var verdict *run.Verdict
	opts := run.Options{
		Selection: run.Selection{Benchmarks: []*suite.Benchmark{bench}},
		Monitor:   run.Monitor{Interval: 5 * time.Millisecond},
		OutputDir: filepath.Join(dir, "results"),
		Store:     "sqlite:" + filepath.Join(dir, "history.db"),
		Compare:   compare.Config{Thresholds: thresholds},
		Observers: []run.Observer{run.OnVerdict(func(v *run.Verdict) { verdict = v })},
		Format:    "none", NoHTMLReport: true, Dir: dir,
	}

	// The first run is recorded and named the baseline "main".
	first, err := run.Run(ctx, opts)
	if err != nil {
		fmt.Println("first run:", err)
		return
	}
	st, err := run.OpenStore(ctx, opts.Store, run.Env{Dir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = st.SetBaseline(ctx, store.Baseline{Name: "main", RunID: first.ID, CreatedAt: time.Now()})
	st.Close()

	// The second run is compared with it, under a budget no function can meet.
	bench.Budgets = map[string]string{"latency_ms.p95": "<= 0.000001"}
	opts.Baseline = "main"
	second, err := run.Run(ctx, opts)

	sc := second.Scenarios[0]
	fmt.Println(sc.ID(), sc.Status, sc.Iterations.Measured, "iterations")
	res := sc.Extra.Resources
	fmt.Println("monitored:", res != nil && res.Samples > 0, "tree:", res.Tree)
	fmt.Println("compared with:", verdict.Baseline, "regressions:", verdict.Compare.Regressions)
	fmt.Println("budgets exceeded:", verdict.Compare.BudgetsExceeded)
	fmt.Println("run failed by its verdict:", errors.Is(err, run.ErrRegression))
	// Output:
	// checksum/default ok 300 iterations
	// monitored: true tree: harness
	// compared with: main regressions: 0
	// budgets exceeded: 1
	// run failed by its verdict: true
}
