package drive

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/inferbench/inferbench/subject"
)

// caller makes calls one at a time, each bounded by a timeout, without allocating a context and a
// timer per call: one watchdog timer is re-armed per call and, when it fires, cancels the shared
// call context, which is then replaced. Calls run under a context that the caller's own
// cancellation does not reach, so an interrupted run finishes the call it is in.
type caller struct {
	parent  context.Context
	timeout time.Duration

	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	inCall bool // a call is running: only then does the watchdog cancel
	fired  bool
	timer  *time.Timer
}

func newCaller(ctx context.Context, timeout time.Duration) *caller {
	c := &caller{parent: context.WithoutCancel(ctx), timeout: timeout}
	c.ctx, c.cancel = context.WithCancel(c.parent)
	c.timer = time.AfterFunc(time.Hour, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.inCall {
			c.fired = true
			c.cancel()
		}
	})
	c.timer.Stop()
	return c
}

// do runs one call of s with the timeout.
func (c *caller) do(s subject.Subject, r subject.Request) (subject.Observation, error) {
	c.mu.Lock()
	c.inCall = true
	ctx := c.ctx
	c.mu.Unlock()
	c.timer.Reset(c.timeout)
	o, err := s.Do(ctx, r)
	c.timer.Stop()
	c.mu.Lock()
	c.inCall = false // a watchdog firing from now on cancels nothing
	if c.fired {
		c.fired = false
		c.ctx, c.cancel = context.WithCancel(c.parent)
		if err == nil {
			err = fmt.Errorf("iteration timed out after %v", c.timeout)
		} else {
			err = fmt.Errorf("iteration timed out after %v: %w", c.timeout, err)
		}
	}
	c.mu.Unlock()
	return o, err
}

// close releases the watchdog.
func (c *caller) close() {
	c.timer.Stop()
	c.cancel()
}
