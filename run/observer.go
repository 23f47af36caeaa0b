package run

import (
	"context"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/result"
)

// Observer follows a run, e.g. the progress bar, the live view and Prometheus /metrics of
// `inferbench run --metrics-addr` (web.LiveRun), or a Go program: it takes part in an event by
// implementing that event's interface, in the order they come: RunStarter, the scenarios' (a
// scenario started, its calls, its measured window, its result), ScenariosFinisher,
// RunJudger, RunFinisher. Options.Observers lists them; one that implements none is a usage
// error.
type Observer any

// RunStarter is an Observer told the run folder before any scenario runs; an error stops the run
// (the observers started before it are finished).
type RunStarter interface {
	RunStarted(ctx context.Context, dir string) error
}

// ScenariosFinisher is an Observer told when the last scenario is done, before anything is
// rendered (the progress bar clears itself).
type ScenariosFinisher interface {
	ScenariosFinished()
}

// RunJudger is an Observer given the verdict of the judge stage (also when it passes),
// before it is rendered.
type RunJudger interface {
	RunJudged(v *Verdict)
}

// RunFinisher is an Observer given the finished (or interrupted) run after it was rendered; its
// error is one of the run's.
type RunFinisher interface {
	RunFinished(ctx context.Context, r *result.Run) error
}

// OnVerdict returns an Observer that calls f with the run's verdict (a RunJudger).
func OnVerdict(f func(*Verdict)) Observer { return verdictFunc(f) }

type verdictFunc func(*Verdict)

func (f verdictFunc) RunJudged(v *Verdict) { f(v) }

var _ RunJudger = verdictFunc(nil)

// checkObservers returns a usage error naming the first observer that takes part in no event.
func checkObservers(obs []Observer) error {
	for i, o := range obs {
		switch o.(type) {
		case RunStarter, ScenariosFinisher, RunJudger, RunFinisher:
			continue
		}
		if !engine.Observes(o) {
			return usageErr("observer %d (%T) takes part in no event: implement one of engine's ScenarioStarter, CallCounter, MeasureStarter, CallHooker, ScenarioFinisher or run's RunStarter, ScenariosFinisher, RunJudger, RunFinisher", i+1, o)
		}
	}
	return nil
}

// observers are Options.Observers in a run.
type observers []Observer

// start tells every RunStarter the run folder; when one fails, those started before it are finished.
func (obs observers) start(ctx context.Context, p *pipeline, w *writer) error {
	for i, o := range obs {
		s, ok := o.(RunStarter)
		if !ok {
			continue
		}
		if err := s.RunStarted(ctx, w.dir); err != nil {
			obs[:i].finish(ctx, p, w.run)
			return err
		}
	}
	return nil
}

// options add the observers to the engine.
func (obs observers) options() []engine.Option {
	opts := make([]engine.Option, len(obs))
	for i, o := range obs {
		opts[i] = engine.WithObserver(o)
	}
	return opts
}

// scenariosDone tells every ScenariosFinisher that the execute stage is over.
func (obs observers) scenariosDone() {
	for _, o := range obs {
		if f, ok := o.(ScenariosFinisher); ok {
			f.ScenariosFinished()
		}
	}
}

// judged hands the verdict to every RunJudger.
func (obs observers) judged(v *Verdict) {
	for _, o := range obs {
		if j, ok := o.(RunJudger); ok {
			j.RunJudged(v)
		}
	}
}

// finish hands the finished run to every RunFinisher.
func (obs observers) finish(ctx context.Context, p *pipeline, r *result.Run) {
	for _, o := range obs {
		if f, ok := o.(RunFinisher); ok {
			p.errs = append(p.errs, f.RunFinished(ctx, r))
		}
	}
}
