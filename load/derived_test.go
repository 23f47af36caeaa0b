package load_test

import (
	"context"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/engine"
	_ "github.com/inferbench/inferbench/internal/kind/mock"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// TestDerivedOncePerRequest: each measured request's generation metrics are derived once
// (load.StreamMetrics), though run.json, the SLO verdict, goodput, the slices and a sweep's steps
// all read them. Warm-up requests are not derived at all.
func TestDerivedOncePerRequest(t *testing.T) {
	for _, tc := range []struct{ name, load string }{
		// A closed loop with SLOs, slices and the request log.
		{"concurrency", "{mode: concurrency, concurrency: 4, warmup_iterations: 3, measurement_iterations: 20, slo: {ttft_ms.p99: 10000}, slice: 5ms}"},
		// An open loop: each request also has a schedule.
		{"rate", "{mode: rate, rate: 500, warmup_iterations: 3, measurement_iterations: 20, slo: {e2e_ms.p50: 10000}}"},
		// A sweep: every step is a window of the same figures.
		{"sweep", "{mode: sweep, warmup_iterations: 2, measurement_iterations: 10, max_concurrency: 4, slo: {ttft_ms.p99: 10000}, sweep: {steps: 1, search: 1}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scs := scenarios(t, `name: once
subject: {kind: mock, latency_ms: 1, generate: {output_tokens: 3, ttft_ms: 1, itl_ms: 1}}
load: `+tc.load+"\n")
			before := load.Derivations()
			run := runAll(t, engine.New(engine.WithChecker(&suite.Checker{EnableMock: true}), engine.WithRequestLog(t.TempDir())), scs)
			sc := run.Scenarios[0]
			if sc.Status != result.StatusOK || sc.Extra.SLO == nil && tc.name != "sweep" {
				t.Fatalf("status %s %s, slo %v", sc.Status, sc.Error, sc.Extra.SLO)
			}
			derived := load.Derivations() - before
			if n := int64(sc.Metrics["ttft_ms"].Summary.N); derived != n || n != int64(sc.Iterations.Measured) {
				t.Errorf("%d derivations for %d measured requests (%d TTFTs): want one each", derived, sc.Iterations.Measured, n)
			}
		})
	}
}

func scenarios(t *testing.T, src string) []*suite.Scenario {
	t.Helper()
	bs, err := suite.Parse("benches/x.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []*suite.Scenario
	for _, b := range bs {
		out = append(out, b.Expand(nil)...)
	}
	return out
}

func runAll(t *testing.T, e *engine.Engine, scs []*suite.Scenario) *result.Run {
	t.Helper()
	run := &result.Run{Schema: result.Schema, ID: "test", StartedAt: time.Now(), Environment: map[string]any{}, Scenarios: []result.Scenario{}}
	if err := e.Run(context.Background(), scs, func(r result.Scenario) { run.Scenarios = append(run.Scenarios, r) }); err != nil {
		t.Fatal(err)
	}
	return run
}
