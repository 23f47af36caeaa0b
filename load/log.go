package load

import (
	"context"
	"log/slog"
)

type logKey struct{}

// WithLogger returns ctx carrying l: drivers write their decisions (warm-up, batch sizes, why
// the measurement stopped) to it as debug records.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, logKey{}, l)
}

// logger returns the logger ctx carries, or one that discards everything.
func logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(logKey{}).(*slog.Logger); ok && l != nil {
		return l
	}
	return slog.New(slog.DiscardHandler)
}
