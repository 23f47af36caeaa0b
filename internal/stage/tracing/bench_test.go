package tracing

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/inferbench/inferbench/internal/engine"
	_ "github.com/inferbench/inferbench/internal/kind/gofunc"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// discard is a span exporter that drops what it gets, so that a benchmark measures the spans'
// cost to the run, not a collector's.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkIteration measures the cost of one iteration of a Go function that does nothing,
// through the engine and the single driver (as engine's BenchmarkNoopIteration), with tracing off
// and on: on at the default --otlp-span-rate (most calls past the first thousand get no span, so
// this is the cost of the hook), and on with a span for every call (docs/performance.md,
// "Tracing").
func BenchmarkIteration(b *testing.B) {
	bs, err := suite.Parse("benches/x.yaml", []byte("name: noop\nsubject: {kind: gofunc, func: inferbench/noop}\n"), nil)
	if err != nil {
		b.Fatal(err)
	}
	sc := bs[0].Expand(nil)[0]
	for _, tc := range []struct {
		name string
		rate float64 // spans per second; < 0 tracing off
	}{
		{"off", -1},
		{"on", DefaultSpanRate},
		{"on-every-call", 1e12},
	} {
		b.Run(tc.name, func(b *testing.B) {
			zero, n := 0, b.N
			opts := []engine.Option{engine.WithLoad(load.Config{WarmupIterations: &zero, MeasurementIterations: &n}), engine.WithKeepSamples(1)}
			var tr *Run
			if tc.rate >= 0 {
				tr, err = Start(context.Background(), "", "bench", WithLookupEnv(noEnv), WithSpanRate(tc.rate),
					func(c *config) { c.exporter = discard{} })
				if err != nil {
					b.Fatal(err)
				}
				opts = append(opts, engine.WithHooks(hooksOf(tr)))
			}
			e := engine.New(opts...)
			var r result.Scenario
			b.ReportAllocs()
			b.ResetTimer()
			err := e.Run(context.Background(), []*suite.Scenario{sc}, func(s result.Scenario) { r = s })
			b.StopTimer()
			if err != nil || r.Status != result.StatusOK || r.Iterations.Measured != b.N {
				b.Fatalf("status %s, measured %d of %d: %v", r.Status, r.Iterations.Measured, b.N, err)
			}
			if tr != nil {
				tr.Finish(context.Background(), nil)
			}
		})
	}
}
