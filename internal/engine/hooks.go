package engine

import (
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// Hooks are the points at which the engine lets a run's observers in, each optional (nil: not
// called), as net/http/httptrace's ClientTrace: a scenario starting, its measured window opening,
// the calls counted in each phase, each call (through the CallHook returned for the scenario)
// and the scenario done. The events themselves, what they mean and their order, are declared
// once, with the run's own, in run/observer.go; run fills a Hooks from each observer's methods.
// Every hook may be called from the driver's goroutines.
type Hooks struct {
	ScenarioStarted  func(sc *suite.Scenario, index, total int)
	MeasureStarted   func(sc *suite.Scenario)
	CallCounted      func(sc *suite.Scenario, phase load.Phase, done int)
	CallHook         func(sc *suite.Scenario, cfg load.Config) CallHook
	ScenarioFinished func(r *result.Scenario)
}

// WithHooks adds an observer's hooks; each set is called in the order added.
func WithHooks(h Hooks) Option {
	return func(e *Engine) { e.hooks = append(e.hooks, h) }
}

// hooks are the engine's observers' hooks, in the order added.
type hooks []Hooks

func (hs hooks) scenarioStarted(sc *suite.Scenario, index, total int) {
	for _, h := range hs {
		if h.ScenarioStarted != nil {
			h.ScenarioStarted(sc, index, total)
		}
	}
}

func (hs hooks) measureStarted(sc *suite.Scenario) {
	for _, h := range hs {
		if h.MeasureStarted != nil {
			h.MeasureStarted(sc)
		}
	}
}

// counting reports whether any observer counts calls, so that a run without one pays nothing
// per call.
func (hs hooks) counting() bool {
	for _, h := range hs {
		if h.CallCounted != nil {
			return true
		}
	}
	return false
}

func (hs hooks) callCounted(sc *suite.Scenario, phase load.Phase, done int) {
	for _, h := range hs {
		if h.CallCounted != nil {
			h.CallCounted(sc, phase, done)
		}
	}
}

func (hs hooks) scenarioFinished(r *result.Scenario) {
	for _, h := range hs {
		if h.ScenarioFinished != nil {
			h.ScenarioFinished(r)
		}
	}
}
