package run

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/suite"
)

// The run's log before its folder exists: what the select stage does (discovery, selection) is
// logged to the console at once and held, then written first into run.log when create opens it.

// earlyLog holds records at or above level until replay.
type earlyLog struct {
	level slog.Level
	mu    *sync.Mutex
	recs  *[]slog.Record
	attrs []slog.Attr
}

func newEarlyLog(level slog.Level) *earlyLog {
	return &earlyLog{level: level, mu: &sync.Mutex{}, recs: &[]slog.Record{}}
}

func (e *earlyLog) Enabled(_ context.Context, l slog.Level) bool { return l >= e.level }

func (e *earlyLog) Handle(_ context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(e.attrs...)
	e.mu.Lock()
	defer e.mu.Unlock()
	*e.recs = append(*e.recs, r)
	return nil
}

func (e *earlyLog) WithAttrs(as []slog.Attr) slog.Handler {
	c := *e
	c.attrs = append(slices.Clip(e.attrs), as...)
	return &c
}

// WithGroup is not used on the early log; records keep their attributes ungrouped.
func (e *earlyLog) WithGroup(string) slog.Handler { return e }

// replay writes the held records to h and forgets them.
func (e *earlyLog) replay(ctx context.Context, h slog.Handler) {
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

// fileLevel is the lowest level run.log keeps: info, or lower when --log-level asks for it.
func (p *pipeline) fileLevel() slog.Level { return min(p.o.LogLevel, slog.LevelInfo) }

// startLog makes the run's log for the stages before the run folder exists: the console (when
// Options.Log is set) and the early log, both through the run's redactor.
func (p *pipeline) startLog() {
	p.early = newEarlyLog(p.fileLevel())
	hs := teeHandler{p.early}
	if p.o.Log != nil {
		hs = append(hs, p.o.Log)
	}
	p.log = slog.New(redact.Handler(hs, p.red))
}

// logDiscovery says, at debug level, where discovery looks, which files it found there, and
// which benchmarks and scenarios were selected from them.
func (p *pipeline) logDiscovery(ctx context.Context, scenarios []*suite.Scenario, err error) {
	if !p.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	sel := p.o.Selection
	if sel.Benchmarks != nil {
		p.log.Debug("discovery: benchmarks given by the caller", "benchmarks", len(sel.Benchmarks))
	} else {
		rs := roots(sel, p.env)
		p.log.Debug("discovery", "roots", rs, "rule", suite.SearchDescription(rs))
		files, ferr := suite.Discover(rs...)
		for _, f := range files {
			p.log.Debug("discovery: definition file", "file", f)
		}
		p.log.Debug("discovery: files found", "n", len(files), "err", ferr)
		if sel.Funcs {
			p.log.Debug("discovery: registered Go functions are benchmarks too")
		}
	}
	if err != nil {
		p.log.Debug("selection failed", "err", err)
		return
	}
	var benches []*suite.Benchmark
	count := map[*suite.Benchmark]int{}
	for _, sc := range scenarios {
		if count[sc.Benchmark] == 0 {
			benches = append(benches, sc.Benchmark)
		}
		count[sc.Benchmark]++
	}
	for _, b := range benches {
		p.log.Debug("selected benchmark", "benchmark", b.Name, "source", b.Source(), "subject", b.Kind, "scenarios", count[b])
	}
	p.log.Debug("selection", "filters", sel.describe(), "benchmarks", len(benches), "scenarios", len(scenarios))
}
