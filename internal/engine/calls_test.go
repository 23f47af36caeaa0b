package engine_test

import (
	"context"
	"sync"
	"testing"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

type beforeKey struct{}

// hookObserver is an Observer with a CallHook that records what it sees.
type hookObserver struct {
	mu      sync.Mutex
	serving bool
	before  int
	calls   []engine.Call
	ctxOK   int // After calls whose ctx came from Before
}

func (l *hookObserver) CallHook(sc *suite.Scenario, cfg load.Config) engine.CallHook {
	l.serving = cfg.Serving()
	return l
}

func (l *hookObserver) Before(ctx context.Context, r subject.Request) context.Context {
	l.mu.Lock()
	l.before++
	l.mu.Unlock()
	return context.WithValue(ctx, beforeKey{}, r.Index)
}

func (l *hookObserver) After(ctx context.Context, c engine.Call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i, ok := ctx.Value(beforeKey{}).(int); ok && i == c.Request.Index {
		l.ctxOK++
	}
	l.calls = append(l.calls, c)
}

// TestCallHook: an observer with a CallHook sees every call, warm-up included, before and after,
// with the context it returned from Before, the observation's timestamps and the error's kind.
func TestCallHook(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		serving   bool
		fails     bool
	}{
		// the single driver: iterations, one failing
		{"single", `name: s
subject: {kind: mock, latency_ms: 1, fail_rate: 0.4}
load: {warmup_iterations: 2, measurement_iterations: 10, max_error_rate: 1}
`, false, true},
		// a serving driver: requests in parallel
		{"concurrency", `name: c
subject: {kind: mock, latency_ms: 1, generate: {output_tokens: 3, ttft_ms: 1, itl_ms: 1}}
load: {mode: concurrency, concurrency: 4, warmup_iterations: 2, measurement_iterations: 12}
`, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &hookObserver{}
			e := engine.New(engine.WithChecker(&suite.Checker{EnableMock: true}), engine.WithHooks(engine.Hooks{CallHook: l.CallHook}))
			run := runAll(t, e, scenarios(t, tc.src))
			sc := run.Scenarios[0]
			n := sc.Iterations.Warmup + sc.Iterations.Measured
			if n == 0 || l.before != n || len(l.calls) != n || l.ctxOK != n {
				t.Fatalf("%d calls (%+v): Before saw %d, After %d, %d with Before's context", n, sc.Iterations, l.before, len(l.calls), l.ctxOK)
			}
			if l.serving != tc.serving {
				t.Errorf("hook's load serving = %v, want %v", l.serving, tc.serving)
			}
			failed := 0
			for _, c := range l.calls {
				if c.Err != nil {
					if !c.Request.Warmup {
						failed++
					}
					if c.ErrorKind == "" {
						t.Errorf("call %d failed with %v and no error kind", c.Request.Index, c.Err)
					}
					continue
				}
				if c.Observation.Start.IsZero() || c.Latency() <= 0 {
					t.Errorf("call %d: start %v latency %v", c.Request.Index, c.Observation.Start, c.Latency())
				}
			}
			if failed != sc.Iterations.Failed || (failed > 0) != tc.fails {
				t.Errorf("hook saw %d failed measured calls, the result %d", failed, sc.Iterations.Failed)
			}
		})
	}
}
