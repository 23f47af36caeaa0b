package drive

import (
	"context"
	"testing"
	"time"

	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/subject"
)

// hanging is a server that accepts a request and never answers: a call ends only when its
// context does.
type hanging struct{ started chan struct{} }

func (h hanging) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	select {
	case h.started <- struct{}{}:
	default:
	}
	o := subject.Observation{Scheduled: r.Scheduled, Start: time.Now()}
	<-ctx.Done()
	o.End = time.Now()
	return o, ctx.Err()
}

// The first Ctrl-C stops serving requests in flight at once, in closed and open loops, instead
// of waiting out the per-request timeout; the requests it cut are dropped, not counted as
// failures. Before, the requests ran under a context only their timeout cancelled, and the
// driver returned after the full timeout (a minute here).
func TestInterruptCutsRequestsInFlight(t *testing.T) {
	for _, c := range []load.Config{
		{Mode: load.ModeConcurrency, Concurrency: 4},
		{Mode: load.ModeRate, Rate: 50, Arrival: "constant"},
	} {
		c.WarmupIterations, c.MeasurementIterations, c.Timeout = ptr(0), ptr(100), time.Minute
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		driver, _ := load.Lookup(c)
		h := hanging{started: make(chan struct{}, 1)}
		rec := newRecorder()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- driver(ctx, h, c, rec) }()
		<-h.started
		time.Sleep(20 * time.Millisecond)
		start := time.Now()
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the driver still waits 10s after the interrupt (timeout %v)", c.Mode, c.Timeout)
		}
		if n := len(rec.obs[load.Measure]); n != 0 {
			t.Errorf("%s: %d cut requests observed, want them dropped", c.Mode, n)
		}
		t.Logf("%s: returned %v after the interrupt", c.Mode, time.Since(start).Round(time.Millisecond))
	}
}

func (hanging) Close() error { return nil }
