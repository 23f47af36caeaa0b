package run

import (
	"context"

	"github.com/inferbench/inferbench/engine"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// Watcher follows a run as it goes, e.g. the live view and Prometheus /metrics of
// `inferbench run --metrics-addr` (web.LiveRun), or an exporter.
type Watcher interface {
	// Start is called with the run folder before any scenario runs; an error stops the run.
	Start(ctx context.Context, dir string) error
	// Measuring is called when a scenario's measured window opens.
	Measuring(benchmark, scenario string)
	// Finish is called with the finished (or interrupted) run after it was rendered.
	Finish(ctx context.Context, r *result.Run) error
}

// watchers are Options.Watchers in a run.
type watchers []Watcher

// startWatchers starts every watcher with the run folder.
func (p *pipeline) startWatchers(ctx context.Context, w *writer) (watchers, error) {
	for i, wt := range p.o.Watchers {
		if err := wt.Start(ctx, w.dir); err != nil {
			watchers(p.o.Watchers[:i]).finish(ctx, p, w.run)
			return nil, err
		}
	}
	return p.o.Watchers, nil
}

// options are the engine options that tell the watchers which scenario is being measured.
func (ws watchers) options() []engine.Option {
	if len(ws) == 0 {
		return nil
	}
	probe := func(ctx context.Context, sc *suite.Scenario, _ subject.Subject) (func(*result.Scenario), error) {
		for _, w := range ws {
			w.Measuring(sc.Benchmark.Name, sc.Name)
		}
		return func(*result.Scenario) {}, nil
	}
	return []engine.Option{engine.WithProbe(probe)}
}

// finish hands the finished run to every watcher.
func (ws watchers) finish(ctx context.Context, p *pipeline, r *result.Run) {
	for _, w := range ws {
		p.errs = append(p.errs, w.Finish(ctx, r))
	}
}
