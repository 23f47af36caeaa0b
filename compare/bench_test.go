package compare

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// BenchmarkCompareRuns compares two runs of 10,000 scenarios × 5 metrics, each metric with 30
// raw samples (Mann-Whitney U per metric, Benjamini-Hochberg over the 50,000 tests).
func BenchmarkCompareRuns(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 9))
	mk := func(id string) *result.Run {
		r := &result.Run{Schema: result.Schema, ID: id}
		for i := 0; i < 10000; i++ {
			r.Scenarios = append(r.Scenarios, scenario(fmt.Sprintf("b%d", i/100), map[string]any{"i": i}, map[string][]float64{
				"latency_ms": lognormal(rng, 30, 10, 0.05), "ttft_ms": lognormal(rng, 30, 3, 0.05),
				"throughput_ips": lognormal(rng, 30, 100, 0.05), "memory_mb": lognormal(rng, 30, 500, 0.05),
				"client_cpu_cores": lognormal(rng, 30, 1.5, 0.05),
			}))
		}
		return r
	}
	old, new := mk("a"), mk("b")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep := Runs(old, new, Config{})
		if len(rep.Rows) != 50000 {
			b.Fatalf("%d rows", len(rep.Rows))
		}
	}
}
