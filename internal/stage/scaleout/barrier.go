package scaleout

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/inferbench/inferbench/store"
)

// Offset measures the local clock minus c's, as Cristian's algorithm does: of a few readings it
// keeps the one with the shortest round trip, whose half is the uncertainty.
func Offset(ctx context.Context, c store.Clock) (offset, uncertainty time.Duration, err error) {
	best := time.Duration(-1)
	for range 5 {
		t0 := time.Now()
		ts, err := c.Now(ctx)
		t1 := time.Now()
		if err != nil {
			return 0, 0, err
		}
		rtt := t1.Sub(t0)
		if best < 0 || rtt < best {
			best = rtt
			mid := t0.Add(rtt / 2)
			offset = mid.Sub(ts)
		}
	}
	return offset, best / 2, nil
}

// MeetOptions tune MeetAt.
type MeetOptions struct {
	// Lead is the time between the last arrival and the start (default 2 s): long enough for
	// every agent to see the last arrival.
	Lead time.Duration
	// Poll is the interval between looks at the barrier (default 100 ms).
	Poll time.Duration
	// Timeout bounds the wait for the others (default 10 min).
	Timeout time.Duration
	// Offset is the local clock minus the store's (Offset), 0 when unknown.
	Offset time.Duration
}

// MeetAt arrives at group's barrier as agent index of count and waits until all count agents have
// arrived. It returns the start time, on the local clock: the last arrival plus Lead, so every
// agent computes the same instant from the same arrivals.
func MeetAt(ctx context.Context, b store.Barrier, group string, index, count int, host string, o MeetOptions) (time.Time, error) {
	if o.Lead <= 0 {
		o.Lead = 2 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 100 * time.Millisecond
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	arrived := time.Now().Add(-o.Offset) // on the store's clock
	if err := b.Arrive(ctx, group, index, host, arrived); err != nil {
		return time.Time{}, fmt.Errorf("start barrier %s: %w", group, err)
	}
	// Arrivals older than this wait are another use of the group's name.
	since := arrived.Add(-o.Timeout)
	deadline := time.Now().Add(o.Timeout)
	for {
		as, err := b.Arrivals(ctx, group, since)
		if err != nil {
			return time.Time{}, fmt.Errorf("start barrier %s: %w", group, err)
		}
		var last time.Time
		here := map[int]bool{}
		for _, a := range as {
			if a.Index >= 0 && a.Index < count {
				here[a.Index] = true
				if a.At.After(last) {
					last = a.At
				}
			}
		}
		if len(here) == count {
			return last.Add(o.Lead).Add(o.Offset), nil
		}
		if time.Now().After(deadline) {
			var missing []string
			for i := range count {
				if !here[i] {
					missing = append(missing, strconv.Itoa(i))
				}
			}
			return time.Time{}, fmt.Errorf("start barrier %s: %d of %d agents arrived in %v; missing %s", group, len(here), count, o.Timeout, strings.Join(missing, ", "))
		}
		select {
		case <-ctx.Done():
			return time.Time{}, errors.Join(fmt.Errorf("start barrier %s: interrupted", group), ctx.Err())
		case <-time.After(o.Poll):
		}
	}
}
