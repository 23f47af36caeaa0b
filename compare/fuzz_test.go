package compare

import (
	"math"
	"testing"

	"github.com/inferbench/inferbench/internal/budget"
)

// FuzzParseBudgetFile feeds arbitrary bytes as a performance-budget.yml: no panic, and a file it
// accepts has limits a check can hold to: every expression parses to a finite limit, and
// max_latency_ms, max_memory_mb and max_cpu_percent are finite and not negative.
func FuzzParseBudgetFile(f *testing.F) {
	for _, s := range []string{
		"budgets:\n  mobile_inference: {max_latency_ms: 250, max_memory_mb: 512, max_cpu_percent: 70}\n",
		"budgets:\n  resnet/*:\n    budgets: {latency_ms.p95: \"<= 25\", throughput_ips: \">= 100\"}\n",
		"budgets:\n  r:\n    budgets: {\"ratio(r/a, r/b).latency_ms.p50\": \"<= 1.1\"}\n",
		"budgets:\n  r: {max_latency_ms: .nan}\n", "budgets:\n  r: {max_memory_mb: -5}\n",
		"budgets:\n  r:\n    budgets: {latency_ms.p95: \"<= Inf\"}\n", "budgets:\n  r:\n    budgets: {x: \"NaN\"}\n",
		"budgets:\n  r: {max_latency_ms: 1, latency: 2}\n", "budgets: !x 1\n", "budgets:\n  r: {max_latency_ms: !x 1}\n",
		"budgets: &a {r: *a}\n", "- 1\n", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		bf, err := parseBudgetFile("budget.yml", data)
		if err != nil {
			return
		}
		for k, b := range bf.Budgets {
			for _, v := range []*float64{b.MaxLatencyMS, b.MaxMemoryMB, b.MaxCPUPercent} {
				if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0) {
					t.Fatalf("%s: accepted a limit of %v", k, *v)
				}
			}
			for m, e := range b.Budgets {
				_, limit, err := budget.ParseBudget(e)
				if err != nil || math.IsNaN(limit) || math.IsInf(limit, 0) {
					t.Fatalf("%s: %s: accepted %q (limit %v, %v)", k, m, e, limit, err)
				}
			}
		}
	})
}

// FuzzParseThresholdsFile: every threshold a benchmark_thresholds.json sets is a finite
// percentage, 0 or more (NaN made every change pass), and a refused file changes nothing.
func FuzzParseThresholdsFile(f *testing.F) {
	for _, s := range []string{
		"{\"latency_regression_threshold\": 10, \"memory_regression_threshold\": 20}\n",
		"{\"metrics\": {\"ttft_ms\": 5}, \"benchmarks\": {\"resnet\": {\"latency\": 8}}}\n",
		"{\"latency_regression_threshold\": NaN}\n", "{\"metrics\": {\"x\": .inf}}\n",
		"{\"benchmarks\": {\"b\": {\"x\": -1}}}\n", "{\"percent\": false}\n",
		"{\"latency_regression_threshold\": 15  # the seed's comment\n}\n", "{\"nope\": 1}\n", "", "[]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var th Thresholds
		if err := th.parseFile("benchmark_thresholds.json", data); err != nil {
			if len(th.Kinds)+len(th.Metrics)+len(th.Benchmarks) > 0 {
				t.Fatalf("refused (%v), but kept %v %v %v", err, th.Kinds, th.Metrics, th.Benchmarks)
			}
			return
		}
		check := func(k string, v float64) {
			if !validPercent(v) || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("accepted %s = %v", k, v)
			}
		}
		for k, v := range th.Kinds {
			check(string(k), v)
		}
		for k, v := range th.Metrics {
			check(k, v)
		}
		for b, m := range th.Benchmarks {
			for k, v := range m {
				check(b+":"+k, v)
			}
		}
	})
}
