package run

import (
	"io"
	"log/slog"
)

// ConsoleHandler returns the handler that shows a run's log on a console without a progress bar
// (piped, or in CI). Quiet by default: only warnings and errors, since the table is the output
// and the full log is in run.log; with explicit set (--log-level given) it shows level and above.
func ConsoleHandler(w io.Writer, level slog.Level, explicit bool) slog.Handler {
	if !explicit {
		level = max(level, slog.LevelWarn)
	}
	return slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})
}
