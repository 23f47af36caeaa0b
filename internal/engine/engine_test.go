package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/engine"
	_ "github.com/inferbench/inferbench/internal/kind/exec"
	"github.com/inferbench/inferbench/internal/kind/gofunc"
	_ "github.com/inferbench/inferbench/internal/kind/mock"
	"github.com/inferbench/inferbench/internal/testkit/schematest"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

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
	run.Tally()
	return run
}

func TestMockStreamingScenario(t *testing.T) {
	scs := scenarios(t, `name: llm
subject: {kind: mock, latency_ms: 2, jitter: 0.01, compile_ms: 30, generate: {output_tokens: 5, ttft_ms: 3, itl_ms: 1}}
matrix:
  variant: [eager, compiled]
load: {warmup_iterations: 1, measurement_iterations: 8}
`)
	e := engine.New(engine.WithChecker(&suite.Checker{EnableMock: true}))
	run := runAll(t, e, scs)
	if run.Summary.Succeeded != 2 {
		t.Fatalf("summary %+v; scenarios %+v", run.Summary, run.Scenarios)
	}
	eager, compiled := run.Scenarios[0], run.Scenarios[1]
	if eager.Iterations != (result.Iterations{Warmup: 1, Measured: 8}) {
		t.Errorf("iterations %+v", eager.Iterations)
	}
	ttft := eager.Metrics["ttft_ms"].Summary
	if ttft == nil || ttft.N != 8 || ttft.Median < 2.9 || ttft.Median > 6 {
		t.Errorf("ttft %+v, want n=8 median about 3 ms", ttft)
	}
	itl := eager.Metrics["itl_ms"].Summary
	if itl == nil || itl.N != 8*4 {
		t.Errorf("itl n = %v, want 32 (4 gaps x 8 requests)", itl)
	}
	if tok := eager.Metrics["output_tokens"].Summary; tok == nil || tok.Median != 5 {
		t.Errorf("output tokens %+v", tok)
	}
	// compiled: the first (warm-up) call carries 30 ms of "compilation"; eager compiles nothing,
	// so it has no compile_time_ms at all (not a 0 that would pass "<= 10").
	if c, ok := compiled.Metrics["compile_time_ms"].Center(); !ok || c < 25 {
		t.Errorf("compiled compile_time_ms = %v (present %v), want about 30", c, ok)
	}
	if m, ok := eager.Metrics["compile_time_ms"]; ok {
		t.Errorf("eager has compile_time_ms %+v, want none: it compiles nothing", m)
	}
	var buf bytes.Buffer
	result.WriteJSON(&buf, run)
	schematest.ValidateRun(t, buf.Bytes())
}

func TestFailuresAndSkips(t *testing.T) {
	scs := scenarios(t, `name: flaky
subject: {kind: mock, latency_ms: 0.1, fail_rate: 0.5}
load: {warmup_iterations: 0, measurement_iterations: 40}
---
name: tolerant
subject: {kind: mock, latency_ms: 0.1, fail_rate: 0.05, seed: 3}
load: {warmup_iterations: 0, measurement_iterations: 40, max_error_rate: 0.5}
---
name: needs-env
subject: {kind: mock}
requires: [env:INFERBENCH_SURELY_UNSET]
---
name: broken-variant
subject: {kind: mock}
params: {variant: turbo}
`)
	e := engine.New(engine.WithChecker(&suite.Checker{EnableMock: true, LookupEnv: func(string) (string, bool) { return "", false }}))
	run := runAll(t, e, scs)
	byName := map[string]result.Scenario{}
	for _, s := range run.Scenarios {
		byName[s.Benchmark] = s
	}
	flaky := byName["flaky"]
	if flaky.Status != result.StatusFailed || flaky.Iterations.Failed == 0 || len(flaky.Errors) == 0 || !strings.Contains(flaky.Error, "measured iterations failed") {
		t.Errorf("flaky: %+v", flaky)
	}
	if flaky.Metrics["latency_ms"].Summary == nil {
		t.Errorf("flaky: successful iterations' latency was lost")
	}
	if s := byName["tolerant"]; s.Status != result.StatusOK {
		t.Errorf("tolerant: status %s (%s)", s.Status, s.Error)
	}
	if s := byName["needs-env"]; s.Status != result.StatusSkipped || !strings.Contains(s.SkipReason, "INFERBENCH_SURELY_UNSET") {
		t.Errorf("needs-env: %+v", s)
	}
	if s := byName["broken-variant"]; s.Status != result.StatusFailed || !strings.Contains(s.Error, `unknown variant "turbo"`) {
		t.Errorf("broken-variant: %+v", s)
	}
	if run.Summary.Total != 4 || run.Summary.Skipped != 1 || run.Summary.Failed != 2 {
		t.Errorf("summary %+v", run.Summary)
	}
	var buf bytes.Buffer
	result.WriteJSON(&buf, run)
	schematest.ValidateRun(t, buf.Bytes())
}

var registered atomic.Int64

// register registers fn under a name unique to this call (tests may run with -count > 1).
func register(fn func(context.Context) error) string {
	name := fmt.Sprintf("engine-test/%d", registered.Add(1))
	gofunc.Register(name, fn)
	return name
}

func TestInterruptStopsAfterCurrentIteration(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int64
	fn := register(func(context.Context) error {
		if calls.Add(1) == 5 {
			cancel() // Ctrl-C during the fifth iteration
		}
		return nil
	})
	scs := scenarios(t, fmt.Sprintf(`name: a
subject: {kind: gofunc, func: %[1]s}
load: {warmup_iterations: 0, measurement_iterations: 1000}
---
name: b
subject: {kind: gofunc, func: %[1]s}
`, fn))
	var got []result.Scenario
	err := engine.New().Run(ctx, scs, func(r result.Scenario) { got = append(got, r) })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if len(got) != 1 {
		t.Fatalf("%d scenarios reported, want only the interrupted one", len(got))
	}
	if got[0].Iterations.Measured != 5 || got[0].Status != result.StatusOK {
		t.Errorf("interrupted scenario: %+v", got[0].Iterations)
	}
	if !strings.Contains(strings.Join(got[0].Warnings, ";"), "interrupted") {
		t.Errorf("no interruption warning: %q", got[0].Warnings)
	}
}

func TestMinAndMaxTime(t *testing.T) {
	fn := register(func(context.Context) error { time.Sleep(2 * time.Millisecond); return nil })
	scs := scenarios(t, fmt.Sprintf(`name: mintime
subject: {kind: gofunc, func: %[1]s}
load: {warmup_iterations: 0, measurement_iterations: 2, min_time: 60ms}
---
name: maxtime
subject: {kind: gofunc, func: %[1]s}
load: {warmup_iterations: 0, measurement_iterations: 100000, max_time: 40ms}
`, fn))
	run := runAll(t, engine.New(), scs)
	if n := run.Scenarios[0].Iterations.Measured; n < 10 {
		t.Errorf("min_time 60ms with 2ms iterations measured only %d", n)
	}
	if n := run.Scenarios[1].Iterations.Measured; n >= 100000 || n < 2 {
		t.Errorf("max_time 40ms measured %d iterations", n)
	}
}

func TestIterationTimeout(t *testing.T) {
	fn := register(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	scs := scenarios(t, fmt.Sprintf(`name: hang
subject: {kind: gofunc, func: %s}
load: {warmup_iterations: 0, measurement_iterations: 2, timeout: 20ms}
`, fn))
	run := runAll(t, engine.New(), scs)
	s := run.Scenarios[0]
	if s.Status != result.StatusFailed || s.Iterations.Failed != 2 || !strings.Contains(s.Errors[0].Error, "timed out after 20ms") {
		t.Errorf("%+v", s)
	}
}

func TestLoadOverride(t *testing.T) {
	scs := scenarios(t, "name: a\nsubject: {kind: gofunc, func: inferbench/noop}\nload: {measurement_iterations: 50}\n")
	n := 7
	run := runAll(t, engine.New(engine.WithLoad(load.Config{MeasurementIterations: &n})), scs)
	if got := run.Scenarios[0].Iterations.Measured; got != 7 {
		t.Errorf("measured %d, want the override 7", got)
	}
	if v, _ := run.Scenarios[0].Metrics["success_rate"].Center(); v != 1 || math.IsNaN(v) {
		t.Errorf("success_rate %v", v)
	}
}

// A subject that compiles nothing has no compile_time_ms (absent, not a difference of two
// timings); the first call's cost stays as first_iteration_ms. Failed before: every scenario had
// compile_time_ms = first call - median.
func TestNoCompileTimeWhereNothingCompiles(t *testing.T) {
	scs := scenarios(t, `name: plain
subject: {kind: mock, latency_ms: 1}
load: {warmup_iterations: 1, measurement_iterations: 5}
`)
	run := runAll(t, engine.New(engine.WithChecker(&suite.Checker{EnableMock: true})), scs)
	m := run.Scenarios[0].Metrics
	if c, ok := m["compile_time_ms"]; ok {
		t.Errorf("eager mock has compile_time_ms %+v, want none", c)
	}
	if _, ok := m["first_iteration_ms"]; !ok {
		t.Error("first_iteration_ms absent")
	}
}

// Units and directions declared where metrics are produced reach the results: the command's
// JSON objects, overridden by the definition's metrics: block.
func TestDeclaredMetrics(t *testing.T) {
	scs := scenarios(t, `name: declared
subject: {kind: exec, command: ["echo", "{\"throughput\": 5, \"hits\": {\"value\": 3, \"better\": \"lower\", \"unit\": \"calls\"}, \"score\": {\"value\": 1, \"better\": \"lower\"}}"], metrics: json}
metrics:
  score: {better: higher, unit: points}
load: {warmup_iterations: 0, measurement_iterations: 3}
`)
	scs[0].Benchmark.Dir = t.TempDir()
	run := runAll(t, engine.New(), scs)
	if sc := run.Scenarios[0]; sc.Status != result.StatusOK {
		t.Fatalf("scenario %s: %s", sc.Status, sc.Error)
	}
	m := run.Scenarios[0].Metrics
	for name, want := range map[string][2]string{
		"throughput": {"1/s", "higher"},    // guessed from the name
		"hits":       {"calls", "lower"},   // declared by the command
		"score":      {"points", "higher"}, // the definition wins
	} {
		if got := m[name]; got.Unit != want[0] || got.Better != want[1] {
			t.Errorf("%s: unit %q better %q, want %q %q", name, got.Unit, got.Better, want[0], want[1])
		}
	}
}
