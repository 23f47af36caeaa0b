package store

import (
	"context"
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
// its clock is from the store's (the scale-out stage measures it). SQLite has none (its clock is the client's).
type Clock interface {
	Now(ctx context.Context) (time.Time, error)
}
