package engine

import (
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// Observer follows a run: it takes part in an event by implementing that event's interface. The
// engine's events are a scenario starting (ScenarioStarter), the calls done in each phase
// (CallCounter), the measured window opening (MeasureStarter), each call (CallHooker) and a
// scenario done (ScenarioFinisher); package run adds the run's own (run.RunStarter,
// run.ScenariosFinisher, run.RunJudger, run.RunFinisher). The method names differ, so one type
// may implement any of them. The progress bar, the live view, the trace and a library caller are
// all observers. Every method may be called from the driver's goroutines.
type Observer any

// ScenarioStarter is an Observer told when each scenario starts, index counting from 0 of total.
type ScenarioStarter interface {
	ScenarioStarted(sc *suite.Scenario, index, total int)
}

// CallCounter is an Observer told the calls done so far in the scenario's phase, after each call.
type CallCounter interface {
	CallCounted(sc *suite.Scenario, phase load.Phase, done int)
}

// MeasureStarter is an Observer told when a scenario's measured window opens (its warm-up is over).
type MeasureStarter interface {
	MeasureStarted(sc *suite.Scenario)
}

// ScenarioFinisher is an Observer given each scenario's result as it is done, skipped ones
// included.
type ScenarioFinisher interface {
	ScenarioFinished(r *result.Scenario)
}

// CallHooker is an Observer that sees every call of a scenario through the CallHook it returns
// for it (nil: none). The tracing package's is one: it records a span per iteration or request.
type CallHooker interface {
	CallHook(sc *suite.Scenario, cfg load.Config) CallHook
}

// Observes reports whether o takes part in any of the engine's events.
func Observes(o Observer) bool {
	var obs observers
	obs.add(o)
	return obs.any()
}

// WithObserver adds an observer; each hears the events it implements, in the order added.
func WithObserver(o Observer) Option {
	return func(e *Engine) { e.observers.add(o) }
}

// observers are the engine's observers, by the event they take part in.
type observers struct {
	started   []ScenarioStarter
	counters  []CallCounter
	measuring []MeasureStarter
	done      []ScenarioFinisher
	hookers   []CallHooker
}

func (obs *observers) add(o Observer) {
	if s, ok := o.(ScenarioStarter); ok {
		obs.started = append(obs.started, s)
	}
	if c, ok := o.(CallCounter); ok {
		obs.counters = append(obs.counters, c)
	}
	if m, ok := o.(MeasureStarter); ok {
		obs.measuring = append(obs.measuring, m)
	}
	if d, ok := o.(ScenarioFinisher); ok {
		obs.done = append(obs.done, d)
	}
	if h, ok := o.(CallHooker); ok {
		obs.hookers = append(obs.hookers, h)
	}
}

func (obs *observers) any() bool {
	return len(obs.started)+len(obs.counters)+len(obs.measuring)+len(obs.done)+len(obs.hookers) > 0
}

func (obs *observers) scenarioStarted(sc *suite.Scenario, index, total int) {
	for _, o := range obs.started {
		o.ScenarioStarted(sc, index, total)
	}
}

func (obs *observers) observed(sc *suite.Scenario, phase load.Phase, done int) {
	for _, o := range obs.counters {
		o.CallCounted(sc, phase, done)
	}
}

func (obs *observers) measure(sc *suite.Scenario) {
	for _, o := range obs.measuring {
		o.MeasureStarted(sc)
	}
}

func (obs *observers) scenarioDone(r *result.Scenario) {
	for _, o := range obs.done {
		o.ScenarioFinished(r)
	}
}
