// Package logs holds the slog handlers a run's log is made of: Tee sends each record to several
// (run.log, the console), and Held keeps the records logged before the run folder exists, for
// run.log to replay when it opens; and the logger a context carries to a load driver (WithLogger,
// Logger).
package logs

import (
	"context"
	"log/slog"
	"slices"
	"sync"
)

// Held holds records at or above its level until Replay: a log whose file does not exist yet.
type Held struct {
	level slog.Level
	mu    *sync.Mutex
	recs  *[]slog.Record
	attrs []slog.Attr
}

// NewHeld returns a Held log of records at or above level.
func NewHeld(level slog.Level) *Held {
	return &Held{level: level, mu: &sync.Mutex{}, recs: &[]slog.Record{}}
}

// Enabled reports whether l is at or above the held level.
func (e *Held) Enabled(_ context.Context, l slog.Level) bool { return l >= e.level }

// Handle keeps a copy of r with the attributes of WithAttrs.
func (e *Held) Handle(_ context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(e.attrs...)
	e.mu.Lock()
	defer e.mu.Unlock()
	*e.recs = append(*e.recs, r)
	return nil
}

// WithAttrs returns a Held that adds as to its records and shares the records held.
func (e *Held) WithAttrs(as []slog.Attr) slog.Handler {
	c := *e
	c.attrs = append(slices.Clip(e.attrs), as...)
	return &c
}

// WithGroup is not used on a held log; records keep their attributes ungrouped.
func (e *Held) WithGroup(string) slog.Handler { return e }

// Replay writes the held records to h and forgets them.
func (e *Held) Replay(ctx context.Context, h slog.Handler) {
	e.mu.Lock()
	recs := *e.recs
	*e.recs = nil
	e.mu.Unlock()
	for _, r := range recs {
		if h.Enabled(ctx, r.Level) {
			h.Handle(ctx, r) //nolint:errcheck // run.log is best effort, as every record is
		}
	}
}

// Tee sends records to several handlers.
type Tee []slog.Handler

var (
	_ slog.Handler = (*Held)(nil)
	_ slog.Handler = Tee(nil)
)

// Enabled reports whether any of the handlers takes level l.
func (t Tee) Enabled(ctx context.Context, l slog.Level) bool {
	for _, h := range t {
		if h.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

// Handle sends a copy of r to each handler that takes its level, stopping at the first error.
func (t Tee) Handle(ctx context.Context, r slog.Record) error {
	for _, h := range t {
		if h.Enabled(ctx, r.Level) {
			if err := h.Handle(ctx, r.Clone()); err != nil {
				return err
			}
		}
	}
	return nil
}

// WithAttrs returns the Tee of each handler with as.
func (t Tee) WithAttrs(as []slog.Attr) slog.Handler {
	out := make(Tee, len(t))
	for i, h := range t {
		out[i] = h.WithAttrs(as)
	}
	return out
}

// WithGroup returns the Tee of each handler in the group name.
func (t Tee) WithGroup(name string) slog.Handler {
	out := make(Tee, len(t))
	for i, h := range t {
		out[i] = h.WithGroup(name)
	}
	return out
}
