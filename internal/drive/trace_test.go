package drive

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/subject"
)

// traced is a subject with a trace: it notes when each request was due.
type traced struct {
	at  []time.Duration
	mu  sync.Mutex
	due map[int]time.Time
}

func (s *traced) Arrivals() []time.Duration { return s.at }
func (s *traced) Close() error              { return nil }
func (s *traced) Do(_ context.Context, r subject.Request) (subject.Observation, error) {
	s.mu.Lock()
	s.due[r.Index] = r.Scheduled
	s.mu.Unlock()
	return stream(1, 2), nil
}

// wrapped hides a subject's abilities behind Unwrap, as the engine's call hooks do.
type wrapped struct{ subject.Subject }

func (w wrapped) Unwrap() subject.Subject { return w.Subject }

// TestTrace: each request goes at its time in the trace (divided by speedup), the first
// warmup_iterations unmeasured; the schedule is the trace's, found through the engine's wrapper.
func TestTrace(t *testing.T) {
	at := []time.Duration{0, 10 * time.Millisecond, 15 * time.Millisecond, 40 * time.Millisecond, 41 * time.Millisecond, 90 * time.Millisecond}
	for _, speed := range []float64{0, 2} {
		s := &traced{at: at, due: map[int]time.Time{}}
		rec := newRecorder()
		c := load.Config{Mode: load.ModeTrace, WarmupIterations: ptr(2), Speedup: speed}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		if err := driveTrace(context.Background(), wrapped{s}, c, rec); err != nil {
			t.Fatal(err)
		}
		if len(rec.obs[load.Warmup]) != 2 || len(rec.obs[load.Measure]) != 4 {
			t.Errorf("speedup %v: %d warm-up, %d measured; want 2 and 4", speed, len(rec.obs[load.Warmup]), len(rec.obs[load.Measure]))
		}
		div := max(speed, 1)
		for i, want := range at {
			if got := s.due[i].Sub(s.due[0]); got != time.Duration(float64(want)/div) {
				t.Errorf("speedup %v: request %d due %v after the first, want %v", speed, i, got, want)
			}
		}
	}
	// measurement_iterations and duration cut the trace.
	s := &traced{at: at, due: map[int]time.Time{}}
	rec := newRecorder()
	if err := driveTrace(context.Background(), s, load.Config{Mode: load.ModeTrace, WarmupIterations: ptr(1), Duration: 30 * time.Millisecond}, rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.obs[load.Measure]) != 3 { // due 10, 15 and 40 ms: within 30 ms of the first measured
		t.Errorf("%d measured within the duration, want 3", len(rec.obs[load.Measure]))
	}
	err := driveTrace(context.Background(), fixed{func(int) subject.Observation { return stream(1) }}, load.Config{Mode: load.ModeTrace}, newRecorder())
	if err == nil || !strings.Contains(err.Error(), "workload is a trace") {
		t.Errorf("a subject without a trace: %v", err)
	}
}
