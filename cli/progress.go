package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// progress reports a run: structured lines to the log (run.log and, when not on a terminal,
// stderr), and a progress bar when stderr is a terminal and CI is not set.
type progress struct {
	log *slog.Logger
	mu  sync.Mutex
	bar *progressbar.ProgressBar
	cur string
	n   int
}

// interactive reports whether w is a terminal a person watches.
func interactive(w io.Writer, o *IO) bool {
	if _, ci := o.LookupEnv("CI"); ci {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func newProgress(log *slog.Logger, o *IO, total int) *progress {
	p := &progress{log: log}
	if interactive(o.Stderr, o) {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(o.Stderr),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(24),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetPredictTime(false),
		)
	}
	return p
}

func (p *progress) ScenarioStarted(sc *suite.Scenario, index, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur, p.n = sc.ID(), total
	p.log.Info("scenario started", "scenario", sc.ID(), "index", index+1, "of", total)
	if p.bar != nil {
		p.bar.Describe(sc.ID())
	}
}

func (p *progress) Observed(sc *suite.Scenario, phase load.Phase, done int) {
	if p.bar == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	what := "measure"
	if phase == load.Warmup {
		what = "warm-up"
	}
	p.bar.Describe(fmt.Sprintf("%s  %s %d", sc.ID(), what, done))
}

func (p *progress) ScenarioDone(r *result.Scenario) {
	p.mu.Lock()
	defer p.mu.Unlock()
	attrs := []any{"scenario", r.ID(), "status", r.Status, "duration_s", fmt.Sprintf("%.2f", r.DurationS)}
	if lat := r.Metrics["latency_ms"].Summary; lat != nil {
		attrs = append(attrs, "n", lat.N, "p50_ms", fmt.Sprintf("%.3f", lat.Median), "p99_ms", fmt.Sprintf("%.3f", lat.P99))
	}
	switch r.Status {
	case result.StatusSkipped:
		attrs = append(attrs, "reason", r.SkipReason)
	case result.StatusFailed:
		attrs = append(attrs, "error", r.Error)
	}
	p.log.Info("scenario done", attrs...)
	if p.bar != nil {
		_ = p.bar.Add(1)
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// teeHandler sends records to several handlers.
type teeHandler []slog.Handler

func (t teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	for _, h := range t {
		if h.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	for _, h := range t {
		if h.Enabled(ctx, r.Level) {
			if err := h.Handle(ctx, r.Clone()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make(teeHandler, len(t))
	for i, h := range t {
		out[i] = h.WithAttrs(as)
	}
	return out
}

func (t teeHandler) WithGroup(name string) slog.Handler {
	out := make(teeHandler, len(t))
	for i, h := range t {
		out[i] = h.WithGroup(name)
	}
	return out
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, usageErr("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}
