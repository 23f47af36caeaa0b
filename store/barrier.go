package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Barrier is an optional ability of a Store (found by type assertion): the load agents of a
// group meet there before they start, so that they start together without a coordinator of
// their own. A store shared by hosts (PostgreSQL) makes it a barrier across machines.
type Barrier interface {
	// Arrive records that agent index of group has arrived, at time at (on the store's clock as
	// well as the agent knows it; see Clock). Arriving again replaces the earlier arrival.
	Arrive(ctx context.Context, group string, index int, host string, at time.Time) error
	// Arrivals returns the arrivals of group at or after since, by index.
	Arrivals(ctx context.Context, group string, since time.Time) ([]Arrival, error)
}

// Arrival is one agent at a barrier.
type Arrival struct {
	Index int
	Host  string
	At    time.Time
}

// Clock is an optional ability of a Store: its own time, so that a client can measure how far
// its clock is from the store's (Offset). SQLite has none (its clock is the client's).
type Clock interface {
	Now(ctx context.Context) (time.Time, error)
}

// Offset measures the local clock minus c's, as Cristian's algorithm does: of a few readings it
// keeps the one with the shortest round trip, whose half is the uncertainty.
func Offset(ctx context.Context, c Clock) (offset, uncertainty time.Duration, err error) {
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

// MeetOptions tune Meet.
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

// Meet arrives at group's barrier as agent index of count and waits until all count agents have
// arrived. It returns the start time, on the local clock: the last arrival plus Lead, so every
// agent computes the same instant from the same arrivals.
func Meet(ctx context.Context, b Barrier, group string, index, count int, host string, o MeetOptions) (time.Time, error) {
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
