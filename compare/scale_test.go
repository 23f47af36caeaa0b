package compare

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// BenchmarkCompareImportedSessions compares two runs the size of imported pytest-benchmark
// sessions: 16 tests of 100,000 samples (rounds) each, their medians by Mann-Whitney and their
// p95 and p99 by bootstrap (issue 46: 52,894 samples a test took minutes a tail).
//
//	go test ./compare -run '^$' -bench CompareImportedSessions -benchtime 3x
func BenchmarkCompareImportedSessions(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	mk := func(id string) *result.Run {
		var scs []result.Scenario
		for i := range 16 {
			scs = append(scs, scenario("test_bench", map[string]any{"i": i}, map[string][]float64{"latency_ms": lognormal(rng, 100_000, 1+float64(i), 0.05)}))
		}
		return run(id, scs...)
	}
	old, new := mk("old"), mk("new")
	b.ResetTimer()
	for b.Loop() {
		rep := Runs(old, new, Config{})
		if len(rep.Rows) < 16 {
			b.Fatal(fmt.Sprint("rows: ", len(rep.Rows)))
		}
	}
}
