package run

import (
	"context"
	"errors"
	"time"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/stage/sample"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// The paired stages: a run whose scenarios are each measured on two sides in the same job
// (`run --baseline-ref REF`: the scenarios at a git ref beside the working tree, interleaved).
// Options.Paired takes the engine's place in the execute stage and the baseline's in the judge
// stage; everything else (the run folder and its journal, run.log, the observers, the store, the
// render, the trace) is the run's own, as for any run.

// Paired measures each selected scenario on two sides in one job and judges the two.
type Paired interface {
	// Pair prepares the other side of the scenarios, before the run folder exists (an error is
	// the run's, with nothing written). It returns the run's environment section that describes
	// the other side (its name and value) and the secrets the other side's definitions hold.
	Pair(ctx context.Context, scenarios []*suite.Scenario) (section string, value any, secrets []string, err error)
	// Measure measures scenario sc on both sides (dir is the run folder: files go under it) and
	// returns the side under test's result, with the other side's in a section of its own.
	Measure(ctx context.Context, sc *suite.Scenario, dir string) (result.Scenario, error)
	// Judge compares the run's scenarios with their other side.
	Judge(r *result.Run) *compare.Report
	// Against names the other side in the verdict's heading.
	Against() string
	// Close releases the other side; its error is the run's.
	Close() error
}

// checkPaired refuses the options a paired run does not do.
func (o Options) checkPaired() error {
	if o.Paired == nil {
		return nil
	}
	switch {
	case o.Baseline != "":
		return exit.Usagef("--baseline-ref with --baseline: a run against a ref compares with the ref alone, measured in this job; drop one of them")
	case o.Scaleout.Shard != nil || o.Scaleout.Agents > 0:
		return exit.Usagef("--baseline-ref with --shard or --agents: a run against a ref measures both sides in one job; drop one of them")
	case o.Profile > 0:
		return exit.Usagef("--baseline-ref with --profile: profile the working tree with a run of its own (`inferbench run --profile N`); explain reads it")
	case o.Monitor.Overhead:
		return exit.Usagef("--baseline-ref with --monitor-overhead: the overhead pass runs each scenario again without monitors, which a run against a ref does not do (its sides are sampled during their own blocks); measure the overhead with a run of its own")
	}
	return nil
}

// sidesSampler is a Paired that samples each side's resources with the run's monitors (ab.Ref):
// each side's processes during its own blocks (sample.Sides).
type sidesSampler interface {
	SampleWith(m *sample.Monitors)
}

// executePaired is the execute stage of a paired run: each scenario measured on both sides by
// Paired, written and observed as the engine's results are; mon (nil: none) the run's monitors.
func (p *pipeline) executePaired(ctx context.Context, w *writer, scenarios []*suite.Scenario, mon *sample.Monitors) *result.Run {
	obs := observers(p.o.Observers)
	if s, ok := p.o.Paired.(sidesSampler); ok && mon != nil {
		s.SampleWith(mon)
	} else if mon != nil {
		w.log.Info("resources are not sampled in this paired run: its Paired does not sample its sides")
	}
	for i, sc := range scenarios {
		if ctx.Err() != nil {
			break
		}
		for _, o := range append([]Observer{logObserver{w.log}}, obs...) {
			if s, ok := o.(ScenarioStarter); ok {
				s.ScenarioStarted(sc, i, len(scenarios))
			}
		}
		res, err := p.o.Paired.Measure(ctx, sc, w.dir)
		if err != nil && !errors.Is(err, context.Canceled) {
			res.Status, res.Error = result.StatusFailed, p.red.String(err.Error())
		}
		if res.Benchmark == "" {
			res.Benchmark, res.Scenario = sc.Benchmark.Name, sc.Name
		}
		for _, o := range append([]Observer{logObserver{w.log}}, obs...) {
			if f, ok := o.(ScenarioFinisher); ok {
				f.ScenarioFinished(&res)
			}
		}
		w.add(res)
	}
	obs.scenariosDone()
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.run
	r.Partial = ctx.Err() != nil
	r.FinishedAt = time.Now()
	r.Tally()
	return r
}
