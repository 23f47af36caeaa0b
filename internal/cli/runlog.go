package cli

import (
	"io"
	"log/slog"
	"strings"

	"github.com/inferbench/inferbench/alert"
	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/base/readall"
	"github.com/inferbench/inferbench/run"
)

// parse reads the alert rules: --alert's, then --alerts-file's (one a line, # comments; relative
// to env's directory) when set. A bad rule or file is a usage error.
func (a *alertFlags) parse(env run.Env) ([]alert.Rule, error) {
	var out []alert.Rule
	file := a.file
	for _, l := range a.rules {
		r, err := alert.Parse(l)
		if err != nil {
			return nil, exit.UsageError(err)
		}
		out = append(out, r)
	}
	if file != "" {
		data, err := readall.File(env.Path(file), readall.ConfigLimit)
		if err != nil {
			return nil, usageErr("--alerts-file: %v", err)
		}
		for i, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			r, err := alert.Parse(l)
			if err != nil {
				return nil, usageErr("%s:%d: %v", file, i+1, err) // the file and line of the rule
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// consoleHandler returns the handler that shows a run's log on a console without a progress bar
// (piped, or in CI). Quiet by default: only warnings and errors, since the table is the output
// and the full log is in run.log; with explicit set (--log-level given) it shows level and above.
func consoleHandler(w io.Writer, level slog.Level, explicit bool) slog.Handler {
	if !explicit {
		level = max(level, slog.LevelWarn)
	}
	return slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})
}
