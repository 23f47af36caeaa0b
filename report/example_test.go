package report_test

import (
	"log"
	"os"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/report"
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

// Comparison renders a comparison in one of CompareFormats (text, markdown for a pull request,
// json, junit); CompareHTML renders it as a page, Table and RunHTML render one run.
func ExampleComparison() {
	rep := compare.Runs(latencyRun("before", 10), latencyRun("after", 12), compare.Config{})
	if err := report.Comparison(os.Stdout, rep, "markdown"); err != nil {
		log.Fatal(err)
	}
	// Output:
	// ### inferbench: ❌ 1 regression(s)
	//
	// `after` compared with `before`. A change counts when it is significant (false discovery rate 5%, 1 tests) **and** beyond its threshold, on a gated metric (latency_ms).
	//
	// | Scenario | Status | Latency (median) | Peak memory | CPU | Throughput |
	// |---|---|---|---|---|---|
	// | resnet50/batch_size=8 | ❌ | 10.30 → 12.30 ms (+19.4%) ❌ | – | – | – |
	//
	// #### Regressions
	//
	// - **resnet50/batch_size=8** `latency_ms`: 10.30 → 12.30 ms (+19.42% (p=0.000 n=40); limit +15%)
}
