package drive_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
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

// coalescer is a streaming subject whose content events came in one read in a pattern (every
// third request its first three, the others a later pair) and whose every sixth request (one of
// those with its first events together) the engine refuses (a negative item count). With said,
// the server says it sent every event apart. It counts what it sent of the requests the engine
// takes.
type coalescer struct {
	said bool

	mu                                  sync.Mutex
	streamed, firstTogether, gaps, zero int
}

// coalescers are the subjects test-coalesce and test-coalesce-said opened last.
var coalescers = map[bool]*coalescer{}

func init() {
	for _, said := range []bool{false, true} {
		name := "test-coalesce"
		if said {
			name += "-said"
		}
		subject.Register(subject.Kind{Name: name, Open: func(context.Context, subject.Spec) (subject.Subject, error) {
			c := &coalescer{said: said}
			coalescers[said] = c
			return c, nil
		}})
	}
}

func (c *coalescer) Close() error { return nil }

func (c *coalescer) Do(_ context.Context, r subject.Request) (subject.Observation, error) {
	start := time.Now()
	t0 := start.Add(time.Millisecond)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	at := []time.Time{t0, ms(1), ms(1), ms(2)}
	first := r.Index%3 == 0
	if first {
		at = []time.Time{t0, t0, t0, ms(2)}
	}
	o := subject.Observation{Start: start, FirstToken: t0, End: ms(3), Streamed: true, OutputTokens: 4}
	for _, a := range at {
		o.Tokens = append(o.Tokens, subject.TokenEvent{At: a, Tokens: 1})
	}
	refused := r.Index%6 == 0
	if refused {
		o.Items = -1
	}
	if c.said {
		o.Values = map[string]float64{figures.ValueServerFirstTogether: 0, figures.ValueServerTogether: 0}
	}
	if !r.Warmup && !refused {
		c.mu.Lock()
		c.streamed++
		if first {
			c.firstTogether++
		}
		for i := 1; i < len(at); i++ {
			c.gaps++
			if at[i].Equal(at[i-1]) {
				c.zero++
			}
		}
		c.mu.Unlock()
	}
	return o, nil
}

// TestCoalescingCountedOnce: what the client read together is counted once a request
// (figures.Coalescing, in the figures run.json is read from): the engine's ttft_coalesced_rate,
// the serving load's itl_coalesced_rate and the coalescing warnings all say what the requests the
// engine took did, whether or not the server says what it sent together. Failed before: the
// serving load counted its own, with the requests the engine then refused, so its warnings gave
// other shares than ttft_coalesced_rate.
func TestCoalescingCountedOnce(t *testing.T) {
	for _, said := range []bool{false, true} {
		kind := map[bool]string{false: "test-coalesce", true: "test-coalesce-said"}[said]
		t.Run(kind, func(t *testing.T) {
			scs := scenarios(t, `name: co
subject: {kind: `+kind+`}
load: {mode: concurrency, concurrency: 2, warmup_iterations: 2, measurement_iterations: 30, max_error_rate: 1}
`)
			sc := runAll(t, engine.New(engine.WithChecker(&suite.Checker{EnableMock: true})), scs).Scenarios[0]
			c := coalescers[said]
			if sc.Status != result.StatusOK || sc.Iterations.Failed == 0 || c.streamed != sc.Iterations.Measured-sc.Iterations.Failed {
				t.Fatalf("status %s %s, %+v, %d taken: want some refused", sc.Status, sc.Error, sc.Iterations, c.streamed)
			}
			ttft, itl := float64(c.firstTogether)/float64(c.streamed), float64(c.zero)/float64(c.gaps)
			if v, _ := sc.Metrics["ttft_coalesced_rate"].Center(); v != ttft {
				t.Errorf("ttft_coalesced_rate %v, want %v", v, ttft)
			}
			if v, _ := sc.Metrics["itl_coalesced_rate"].Center(); v != itl {
				t.Errorf("itl_coalesced_rate %v, want %v", v, itl)
			}
			for _, want := range []string{fmt.Sprintf("ttft: %.1f%% of first tokens", 100*ttft), fmt.Sprintf("itl: %.1f%% of inter-token gaps", 100*itl)} {
				if !slices.ContainsFunc(sc.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
					t.Errorf("no warning %q...: %q", want, sc.Warnings)
				}
			}
			if _, ok := sc.Metrics[figures.ValueServerFirstTogether]; ok {
				t.Errorf("%s is a metric of a serving load", figures.ValueServerFirstTogether)
			}
		})
	}
}

// refusedTurns is a subject of 2-turn sessions that streams every answer, and whose every third
// request the engine refuses (a negative item count).
type refusedTurns struct{}

func init() {
	subject.Register(subject.Kind{Name: "test-refused-turns", Open: func(context.Context, subject.Spec) (subject.Subject, error) {
		return refusedTurns{}, nil
	}})
}

func (refusedTurns) Turns() int   { return 2 }
func (refusedTurns) Close() error { return nil }
func (refusedTurns) Do(_ context.Context, r subject.Request) (subject.Observation, error) {
	start := time.Now()
	o := subject.Observation{Start: start, FirstToken: start.Add(time.Millisecond), End: start.Add(time.Duration(2+r.Index%2) * time.Millisecond), Streamed: true, OutputTokens: 2}
	o.Tokens = []subject.TokenEvent{{At: o.FirstToken, Tokens: 1}, {At: o.End, Tokens: 1}}
	if r.Index%3 == 2 {
		o.Items = -1
	}
	return o, nil
}

// TestTurnsWindowsOfRunJSON: under the engine, mode sessions' turns are windows of the figures
// run.json's ttft_ms and e2e_ms are read from: their requests add up to ttft_ms's, the requests
// the engine refused left out of both. Failed before: the sessions driver derived each turn's
// figures again from what it had sent, the refused requests included.
func TestTurnsWindowsOfRunJSON(t *testing.T) {
	scs := scenarios(t, `name: turns
subject: {kind: test-refused-turns}
load: {mode: sessions, concurrency: 2, warmup_iterations: 2, measurement_iterations: 24, max_error_rate: 1}
`)
	sc := runAll(t, engine.New(), scs).Scenarios[0]
	turns := sc.Extra.Turns
	if sc.Status != result.StatusOK || sc.Iterations.Failed == 0 || len(turns) != 2 {
		t.Fatalf("status %s %s, %+v, turns %+v: want some refused, 2 turns", sc.Status, sc.Error, sc.Iterations, turns)
	}
	n := 0
	for _, st := range turns {
		n += st.Requests
	}
	if want := sc.Metrics["ttft_ms"].Summary.N; n != want || n != sc.Metrics["e2e_ms"].Summary.N {
		t.Errorf("turns %+v: %d requests, want ttft_ms's %d (e2e_ms's %d)", turns, n, want, sc.Metrics["e2e_ms"].Summary.N)
	}
	// Turn 1's requests took 2 ms, turn 2's 3 ms (even and odd indices).
	if turns[0].E2EP50 != 2 || turns[1].E2EP50 != 3 {
		t.Errorf("turns %+v: want e2e p50 2 and 3 ms", turns)
	}
}
