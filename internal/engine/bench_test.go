package engine_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/suite"
)

// BenchmarkNoopIteration measures the harness's own cost per iteration: the single driver calling
// a Go function that does nothing, with the collector recording its latency. ns/op is the cost of
// one iteration (docs/performance.md).
func BenchmarkNoopIteration(b *testing.B) {
	bs, err := suite.Parse("benches/x.yaml", []byte("name: noop\nsubject: {kind: gofunc, func: inferbench/noop}\n"), nil)
	if err != nil {
		b.Fatal(err)
	}
	sc := bs[0].Expand(nil)[0]
	zero, n := 0, b.N
	e := engine.New(engine.WithLoad(load.Config{WarmupIterations: &zero, MeasurementIterations: &n}), engine.WithKeepSamples(1))
	b.ReportAllocs()
	b.ResetTimer()
	r := e.RunScenario(context.Background(), sc)
	b.StopTimer()
	if r.Status != result.StatusOK || r.Iterations.Measured != b.N {
		b.Fatalf("status %s, measured %d of %d", r.Status, r.Iterations.Measured, b.N)
	}
}

// BenchmarkMillionSamplesHeld reports the heap held by one metric's million raw samples
// (MB-held), the bar being 16 MB.
func BenchmarkMillionSamplesHeld(b *testing.B) {
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d := stats.NewDist(0)
		for i := range 1_000_000 {
			d.Add(float64(i%1000) * 0.013)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "MB-held")
		runtime.KeepAlive(d)
	}
}

// BenchmarkSummaryMillion measures summarising a million samples (sorting dominates).
func BenchmarkSummaryMillion(b *testing.B) {
	d := stats.NewDist(0)
	for i := range 1_000_000 {
		d.Add(float64((i*7919)%100000) * 0.001)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := d.Summary(); err != nil {
			b.Fatal(err)
		}
	}
}
