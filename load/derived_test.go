package load_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/cli/ab"
	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/internal/figures"
	_ "github.com/inferbench/inferbench/internal/kind/mock"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// TestDerivedOncePerRequest: each measured request's generation metrics are derived once
// (figures.StreamMetrics), though run.json, the SLO verdict, goodput, the slices and a sweep's steps
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
			before := figures.Derivations()
			run := runAll(t, engine.New(engine.WithChecker(&suite.Checker{EnableMock: true}), engine.WithRequestLog(t.TempDir())), scs)
			sc := run.Scenarios[0]
			if sc.Status != result.StatusOK || sc.Extra.SLO == nil && tc.name != "sweep" {
				t.Fatalf("status %s %s, slo %v", sc.Status, sc.Error, sc.Extra.SLO)
			}
			derived := figures.Derivations() - before
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

// halfStreamed is a subject of 2-turn sessions whose odd requests answer without streaming a
// token (a server that sent an empty answer): they have a latency but no TTFT or end-to-end
// generation latency.
type halfStreamed struct{}

func (halfStreamed) Turns() int   { return 2 }
func (halfStreamed) Close() error { return nil }
func (halfStreamed) Do(_ context.Context, r subject.Request) (subject.Observation, error) {
	start := time.Now()
	o := subject.Observation{Start: start, End: start.Add(3 * time.Millisecond)}
	if r.Index%2 == 0 {
		o.FirstToken = start.Add(time.Millisecond)
		o.Tokens = []subject.TokenEvent{{At: o.FirstToken, Tokens: 1}, {At: o.End, Tokens: 1}}
		o.Streamed = true
	}
	return o, nil
}

// reporter is a Sink that keeps the sections a driver reports.
type reporter struct {
	mu       sync.Mutex
	measured int
	extra    map[string]any
}

func (r *reporter) Begin(load.Phase) {}
func (r *reporter) Observe(p load.Phase, _ subject.Observation, _ error) {
	if p == load.Measure {
		r.mu.Lock()
		r.measured++
		r.mu.Unlock()
	}
}
func (r *reporter) Value(string, float64) {}
func (r *reporter) Warn(string)           {}
func (r *reporter) Extra(section string, v any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.extra[section] = v
}

// TestTurnsDerivedAsRunJSON: mode sessions' per-turn figures are those of run.json's ttft_ms and
// e2e_ms, by the same derivation (figures.StreamMetrics), so a turn counts the requests that
// streamed and its end-to-end latency leaves out those that did not.
func TestTurnsDerivedAsRunJSON(t *testing.T) {
	c := load.Config{Mode: load.ModeSessions, Concurrency: 1, WarmupIterations: new(0), MeasurementIterations: new(8)}
	drive, ok := load.Lookup(c)
	if err := c.Validate(); err != nil || !ok {
		t.Fatal(err, ok)
	}
	rec := &reporter{extra: map[string]any{}}
	before := figures.Derivations()
	if err := drive(context.Background(), halfStreamed{}, c, rec); err != nil {
		t.Fatal(err)
	}
	derived := figures.Derivations() - before
	turns, _ := rec.extra[result.SectionTurns].([]result.TurnStat)
	if len(turns) != 2 || rec.measured != 8 {
		t.Fatalf("%d measured, turns %+v; want 8 and 2 turns", rec.measured, turns)
	}
	// Turn 1 (even requests) streamed, turn 2 did not.
	if turns[0].Requests != 4 || turns[1].Requests != 0 || turns[0].E2EP50 != 3 || turns[1].E2EP50 != 0 {
		t.Errorf("turns %+v: want 4 streamed requests of 3 ms in turn 1, none in turn 2", turns)
	}
	if derived != 4 {
		t.Errorf("%d derivations for 4 streamed requests: want one each", derived)
	}
}

// TestABDerivedAsRunJSON: ab's value of a call for a generation metric is run.json's for it
// (figures.StreamMetrics, once a call): a call that streamed nothing has no e2e_ms, where ab took
// its round trip before.
func TestABDerivedAsRunJSON(t *testing.T) {
	cfg := load.Config{}
	before := figures.Derivations()
	vals, failed, err := ab.Subjects(halfStreamed{}, halfStreamed{}, cfg, "e2e_ms")(context.Background(), 0, 4)
	if err != nil || failed != 0 {
		t.Fatal(err, failed)
	}
	if len(vals) != 2 || vals[0] != 3 || vals[1] != 3 {
		t.Errorf("e2e_ms of 4 calls, 2 streamed: %v, want [3 3]", vals)
	}
	if d := figures.Derivations() - before; d != 2 {
		t.Errorf("%d derivations for 2 streamed calls, want 2", d)
	}
}
