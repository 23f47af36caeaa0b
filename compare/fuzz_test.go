package compare

import (
	"math"
	"testing"
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
				_, limit, err := ParseBudget(e)
				if err != nil || math.IsNaN(limit) || math.IsInf(limit, 0) {
					t.Fatalf("%s: %s: accepted %q (limit %v, %v)", k, m, e, limit, err)
				}
			}
		}
	})
}
