package compare_test

import (
	"fmt"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/result"
)

// latencyRun is a run of one scenario whose latency samples are base plus a small spread.
func latencyRun(id string, base float64) *result.Run {
	xs := make([]float64, 40)
	for i := range xs {
		xs[i] = base + float64(i%7)*0.1
	}
	return &result.Run{
		Schema: result.Schema,
		ID:     id,
		Scenarios: []result.Scenario{{
			Benchmark: "resnet50", Scenario: "batch_size=8", Subject: "gofunc", Status: result.StatusOK,
			Params:  map[string]any{"batch_size": 8},
			Metrics: map[string]result.Metric{"latency_ms": result.SampleMetric("latency_ms", xs)},
		}},
	}
}

// Runs compares two runs scenario by scenario: each metric's median (Mann-Whitney U, with the
// false discovery rate held across the comparison) and tail percentiles (bootstrap), judged
// against the metric's threshold. A gated metric that got worse beyond it is a regression.
func ExampleRuns() {
	before := latencyRun("before", 10)
	after := latencyRun("after", 12) // 20% slower

	rep := compare.Runs(before, after, compare.Config{})
	for _, row := range rep.Rows {
		if row.Gated {
			fmt.Printf("%s %s: %.2f -> %.2f %s (%+.0f%%, threshold %.0f%%): %s\n",
				row.Scenario, row.Metric, row.Old, row.New, row.Unit, row.Delta, row.Threshold, row.Verdict)
		}
	}
	fmt.Println("regressions:", rep.Regressions, "failed:", rep.Failed())
	// Output:
	// batch_size=8 latency_ms: 10.30 -> 12.30 ms (+19%, threshold 15%): regression
	// regressions: 1 failed: true
}
