package engine_test

import (
	"context"
	"runtime/debug"
	"sync/atomic"
	"testing"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/subject"
)

// gcSeen is a subject that records the collector's target (GOGC) its calls ran under.
type gcSeen struct{ seen *atomic.Int64 }

func (g gcSeen) Do(context.Context, subject.Request) (subject.Observation, error) {
	p := debug.SetGCPercent(100) // reads the target; calls are one at a time
	debug.SetGCPercent(p)
	g.seen.Store(int64(p))
	return subject.Observation{}, nil
}

func (gcSeen) Close() error { return nil }

var gcIn, gcOut atomic.Int64

func init() {
	subject.Register(subject.Kind{Name: "test-gc-in", InProcess: true,
		Open: func(context.Context, subject.Spec) (subject.Subject, error) { return gcSeen{&gcIn}, nil }})
	subject.Register(subject.Kind{Name: "test-gc-out",
		Open: func(context.Context, subject.Spec) (subject.Subject, error) { return gcSeen{&gcOut}, nil }})
}

// TestClientGC: while it drives a subject outside this process the engine collects less often
// (ClientGCHeadroom), and afterwards restores the target; a Go function's benchmark runs under the
// target `go test -bench` would use. At the default target a 512-stream client spent a quarter of
// its requests collecting (docs/performance.md).
func TestClientGC(t *testing.T) {
	t.Setenv("GOGC", "") // the user's own GOGC would be kept
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	scs := scenarios(t, `name: in
subject: {kind: test-gc-in}
load: {warmup_iterations: 0, measurement_iterations: 2}
---
name: out
subject: {kind: test-gc-out}
load: {warmup_iterations: 0, measurement_iterations: 2}
`)
	runAll(t, engine.New(), scs)
	if got := gcIn.Load(); got != 100 {
		t.Errorf("an in-process subject ran under GOGC %d, want 100 (left as it was)", got)
	}
	if got := gcOut.Load(); got <= 100 || got > engine.ClientGCPercentMax {
		t.Errorf("a subject outside the process ran under GOGC %d, want above 100 (a live heap of a few MB given %d MB of headroom) and at most %d",
			got, engine.ClientGCHeadroom>>20, engine.ClientGCPercentMax)
	}
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("after the run GOGC is %d, want 100 restored", p)
	}
}
