package run

import (
	"context"
	"log/slog"

	"github.com/inferbench/inferbench/internal/base/logs"
	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/suite"
)

// The run's log before its folder exists: what the select stage does (discovery, selection) is
// logged to the console at once and held (logs.Held), then written first into run.log when
// create opens it.

// fileLevel is the lowest level run.log keeps: info, or lower when --log-level asks for it.
func (p *pipeline) fileLevel() slog.Level { return min(p.o.LogLevel, slog.LevelInfo) }

// startLog makes the run's log for the stages before the run folder exists: the console (when
// Options.Log is set) and the early log, both through the run's redactor.
func (p *pipeline) startLog() {
	p.early = logs.NewHeld(p.fileLevel())
	hs := logs.Tee{p.early}
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
