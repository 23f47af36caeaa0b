package redact

import (
	"context"
	"log/slog"
)

// Handler returns a slog.Handler that redacts every record before h sees it: the message and
// every attribute's text (a string, an error, anything printed), in groups too. A run's log goes
// through it, so that no record — a worker's protocol line, a command line, a server's error —
// writes a secret into run.log or onto the console.
func Handler(h slog.Handler, r *Redactor) slog.Handler { return &handler{h: h, red: r} }

type handler struct {
	h   slog.Handler
	red *Redactor
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.red.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.attr(a)
	}
	return &handler{h: h.h.WithAttrs(red), red: h.red}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{h: h.h.WithGroup(name), red: h.red}
}

// attr redacts one attribute: text is redacted, numbers, booleans, times and durations pass.
func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.red.String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]slog.Attr, len(g))
		for i, ga := range g {
			red[i] = h.attr(ga)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	case slog.KindAny:
		if v.Any() == nil {
			return slog.Attr{Key: a.Key, Value: v}
		}
		return slog.String(a.Key, h.red.String(v.String()))
	}
	return slog.Attr{Key: a.Key, Value: v}
}
