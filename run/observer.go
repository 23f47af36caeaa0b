package run

import (
	"context"

	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// This file declares every event a run can be observed by, in the order a run has them; no other
// file declares one (TestEventsOnOnePage). The engine reaches its observers through the hooks
// (engine.Hooks) engineHooks fills from these interfaces.

// Observer follows a run, e.g. the progress bar, the live view and Prometheus /metrics of
// `inferbench run --metrics-addr`, run.log, the trace, or a Go program: it takes
// part in an event by implementing that event's one-method interface, named for its method. The
// method names differ, so one type may implement any of them. Options.Observers lists them; one
// that implements none is a usage error. The scenarios' events (ScenarioStarter, MeasureStarter,
// CallCounter, the call hook, ScenarioFinisher) may come from the driver's goroutines.
type Observer any

// RunStarter is an Observer told the run folder before any scenario runs; an error stops the run
// (the observers started before it are finished).
type RunStarter interface {
	RunStarted(ctx context.Context, dir string) error
}

// ScenarioStarter is an Observer told when each scenario starts, index counting from 0 of total.
type ScenarioStarter interface {
	ScenarioStarted(sc *suite.Scenario, index, total int)
}

// MeasureStarter is an Observer told when a scenario's measured window opens (its warm-up is over).
type MeasureStarter interface {
	MeasureStarted(sc *suite.Scenario)
}

// CallCounter is an Observer told the calls done so far in the scenario's phase, after each call.
type CallCounter interface {
	CallCounted(sc *suite.Scenario, phase load.Phase, done int)
}

// callHooker is an Observer that sees every call of a scenario through the engine.CallHook it
// returns for it (nil: none); the trace's is one, a span per iteration or request. It is not
// exported: a call is seen through the engine's types, which are internal.
type callHooker interface {
	CallHook(sc *suite.Scenario, cfg load.Config) engine.CallHook
}

// ScenarioFinisher is an Observer given each scenario's result as it is done, skipped ones
// included.
type ScenarioFinisher interface {
	ScenarioFinished(r *result.Scenario)
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

// engineHooks returns the hooks through which the engine tells o the scenarios' events it
// implements; ok is false when it implements none.
func engineHooks(o Observer) (h engine.Hooks, ok bool) {
	if s, is := o.(ScenarioStarter); is {
		h.ScenarioStarted, ok = s.ScenarioStarted, true
	}
	if m, is := o.(MeasureStarter); is {
		h.MeasureStarted, ok = m.MeasureStarted, true
	}
	if c, is := o.(CallCounter); is {
		h.CallCounted, ok = c.CallCounted, true
	}
	if c, is := o.(callHooker); is {
		h.CallHook, ok = c.CallHook, true
	}
	if f, is := o.(ScenarioFinisher); is {
		h.ScenarioFinished, ok = f.ScenarioFinished, true
	}
	return h, ok
}

// checkObservers returns a usage error naming the first observer that takes part in no event.
func checkObservers(obs []Observer) error {
	for i, o := range obs {
		switch o.(type) {
		case RunStarter, ScenariosFinisher, RunJudger, RunFinisher:
			continue
		}
		if _, ok := engineHooks(o); !ok {
			return exit.Usagef("observer %d (%T) takes part in no event: implement one of run's RunStarter, ScenarioStarter, MeasureStarter, CallCounter, ScenarioFinisher, ScenariosFinisher, RunJudger, RunFinisher", i+1, o)
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

// options add the observers of the scenarios' events to the engine, in their order.
func (obs observers) options() []engine.Option {
	var opts []engine.Option
	for _, o := range obs {
		if h, ok := engineHooks(o); ok {
			opts = append(opts, engine.WithHooks(h))
		}
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
