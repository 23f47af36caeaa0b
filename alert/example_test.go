package alert_test

import (
	"context"
	"fmt"
	"log"

	"github.com/inferbench/inferbench/alert"
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
			Metrics: map[string]result.Metric{"latency_ms": result.SampleMetric("latency_ms", xs)},
		}},
	}
}

// Evaluate checks rules against a finished run (and its baseline, for rules that name it); what
// fires goes to a webhook with Post or by mail with Mail.
func ExampleEvaluate() {
	var rules []alert.Rule
	for _, s := range []string{
		"latency_ms.p95 > baseline * 1.1",
		"latency_ms.p50 > 100 -> email oncall@example.com",
	} {
		r, err := alert.Parse(s)
		if err != nil {
			log.Fatal(err)
		}
		rules = append(rules, r)
	}

	fired, notes := alert.Evaluate(context.Background(), rules, latencyRun("after", 12), latencyRun("before", 10), nil)
	for _, f := range fired {
		fmt.Printf("%s: %s (%.2f > %.2f)\n", f.Scenario, f.Rule, f.Value, f.Limit)
	}
	fmt.Println(len(notes), "notes")
	// Output:
	// resnet50/batch_size=8: latency_ms.p95 > baseline * 1.1 (12.60 > 11.66)
	// 0 notes
}
