package gofunc

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

var registered atomic.Int64

// open registers a function counting its calls under a name unique to the call (tests may run
// with -count > 1) and opens it with the given iteration time (nil: the default).
func open(t *testing.T, iterationTime *time.Duration) (*Subject, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	name := fmt.Sprintf("gofunc-test/%d", registered.Add(1))
	Register(name, func(context.Context) error { calls.Add(1); return nil })
	s, err := Open(context.Background(), subject.Spec{Config: &Config{Func: name, IterationTime: iterationTime}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*Subject), &calls
}

// do makes one iteration and returns the calls it made.
func do(t *testing.T, s *Subject, calls *atomic.Int64, r subject.Request) (subject.Observation, int64) {
	t.Helper()
	before := calls.Load()
	o, err := s.Do(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return o, calls.Load() - before
}

// A fast function is called many times per iteration, as many as the warm-up found to last the
// iteration time (here an hour: each warm-up grows the calls 100-fold, the most it may), and
// the measured iterations keep that number; latency_ms is the time per call.
func TestIterationBatchesCalls(t *testing.T) {
	hour := time.Hour
	s, calls := open(t, &hour)
	for i, want := range []int64{1, 100, 10_000} {
		if _, got := do(t, s, calls, subject.Request{Warmup: true}); got != want {
			t.Errorf("warm-up %d: %d calls, want %d", i, got, want)
		}
	}
	for i := range 2 {
		o, got := do(t, s, calls, subject.Request{})
		if got != 1_000_000 {
			t.Fatalf("measured iteration %d: %d calls, want the 1,000,000 the last warm-up asked for", i, got)
		}
		if o.Items != 1_000_000 {
			t.Errorf("items %d, want one per call", o.Items)
		}
		perCall := float64(o.End.Sub(o.Start)) / 1e6 / 1e6
		if v, ok := o.Values["latency_ms"]; !ok || v != perCall {
			t.Errorf("latency_ms %v (reported: %v), want the time per call %v", v, ok, perCall)
		}
	}
}

// The default iteration time applies to a registered function without a definition; 0 and an
// open loop's request make one call per iteration, reported as before (no latency_ms of its
// own, one item).
func TestIterationSingleCalls(t *testing.T) {
	if got := (&Config{}).iterationTime(); got != DefaultIterationTime {
		t.Errorf("default iteration time %v, want %v", got, DefaultIterationTime)
	}
	zero := time.Duration(0)
	s, calls := open(t, &zero)
	for range 3 {
		do(t, s, calls, subject.Request{Warmup: true})
	}
	o, got := do(t, s, calls, subject.Request{})
	if _, own := o.Values["latency_ms"]; got != 1 || o.Items != 0 || own {
		t.Errorf("iteration_time 0: %d calls, items %d, values %v; want a single call", got, o.Items, o.Values)
	}
	hour := time.Hour
	s, calls = open(t, &hour)
	for range 3 {
		do(t, s, calls, subject.Request{Warmup: true})
	}
	if _, got := do(t, s, calls, subject.Request{Scheduled: time.Now()}); got != 1 {
		t.Errorf("open-loop request: %d calls, want 1", got)
	}
}

// callsFor: the calls that last the target at the measured pace, at most 100 times those timed.
func TestCallsFor(t *testing.T) {
	for _, c := range []struct {
		target, took time.Duration
		n, want      int64
	}{
		{20 * time.Millisecond, 760 * time.Microsecond, 1, 27},  // a 0.76 ms function
		{20 * time.Millisecond, 76 * time.Millisecond, 100, 27}, // its second warm-up
		{20 * time.Millisecond, 50 * time.Millisecond, 1, 1},    // slower than the target: one call
		{20 * time.Millisecond, 100, 1, 100},                    // 100 ns: grows at most 100-fold
		{20 * time.Millisecond, 0, 1, 100},                      // a clock that saw nothing
		{time.Hour, time.Nanosecond, maxCalls, maxCalls},        // bounded
	} {
		if got := callsFor(c.target, c.took, c.n); got != c.want {
			t.Errorf("callsFor(%v, %v, %d) = %d, want %d", c.target, c.took, c.n, got, c.want)
		}
	}
}

// iteration_time in a definition: a duration, 0s for single calls; a negative one is refused.
func TestIterationTimeDefinition(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want time.Duration
	}{
		{"", DefaultIterationTime},
		{", iteration_time: 0s", 0},
		{", iteration_time: 50ms", 50 * time.Millisecond},
	} {
		bs, err := suite.Parse("benches/x.yaml", []byte("name: x\nsubject: {kind: gofunc, func: inferbench/noop"+c.yaml+"}\n"), nil)
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		if got := bs[0].Config.(*Config).iterationTime(); got != c.want {
			t.Errorf("%q: iteration time %v, want %v", c.yaml, got, c.want)
		}
	}
	if _, err := suite.Parse("benches/x.yaml", []byte("name: x\nsubject: {kind: gofunc, func: inferbench/noop, iteration_time: -1s}\n"), nil); err == nil {
		t.Error("iteration_time -1s: no error")
	}
}
