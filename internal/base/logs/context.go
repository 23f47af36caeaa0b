package logs

import (
	"context"
	"log/slog"
)

type loggerKey struct{}

// WithLogger returns ctx carrying l: the engine hands a scenario's logger to its load driver this
// way, and the driver writes its decisions (warm-up, batch sizes, why the measurement stopped) to
// it as debug records.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

// Logger returns the logger ctx carries (WithLogger), or one that discards everything.
func Logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok && l != nil {
		return l
	}
	return slog.New(slog.DiscardHandler)
}
