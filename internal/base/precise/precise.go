// Package precise waits to within tens of microseconds: the runtime's timers are woken by
// epoll_wait, whose timeout has millisecond resolution, so a Go timer can fire up to a millisecond
// late when the process is otherwise idle. The open-loop dispatcher sends on time with it, and the
// mock model's waits last what its definition says.
package precise

import (
	"context"
	"time"
)

// Coarse is how far ahead of a deadline a wait stops relying on the runtime's timer and sleeps in
// the kernel instead (Fine).
const Coarse = 1500 * time.Microsecond

// Until returns at due, or false when ctx is done first. timer is reused across calls (any
// stopped or fired timer; its channel must be drained).
func Until(ctx context.Context, timer *time.Timer, due time.Time) bool {
	if d := time.Until(due) - Coarse; d > 0 {
		timer.Reset(d)
		select {
		case <-timer.C:
		case <-ctx.Done():
			return false
		}
	}
	if d := time.Until(due); d > 0 {
		Fine(d)
	}
	return ctx.Err() == nil
}

// Sleep waits d, or returns ctx's error when ctx is done first.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	if !Until(ctx, t, time.Now().Add(d)) {
		return ctx.Err()
	}
	return nil
}
