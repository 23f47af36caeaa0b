package engine

import (
	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/internal/serverproc"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// Redactor hides secrets in text: String returns s with every secret it knows masked. A run
// (package run) learns its secrets where they enter (flags, the environment, the definitions)
// into one, and hands it to the engine with WithRedactor. It is serverproc.Redactor, declared once
// there, since the engine hands it on to a launched server's log.
type Redactor = serverproc.Redactor

// WithRedactor hides secrets in what enters a scenario's result from the outside, through r:
// every call's error (a server's error body echoing an API key) before the request log and the
// collector see it, the scenario's error, warnings and parameters, the subject's output log and
// a launched server's log.
func WithRedactor(r Redactor) Option { return func(e *Engine) { e.redact = r } }

// redactSink redacts each call's error and each warning, then passes them on.
type redactSink struct {
	sink
	red Redactor
}

func (s redactSink) Observe(p load.Phase, o subject.Observation, err error) {
	s.sink.Observe(p, o, redact.Err(s.red, err))
}

func (s redactSink) Warn(msg string) { s.sink.Warn(s.red.String(msg)) }

func (e *Engine) redactSink(next sink) sink {
	if e.redact == nil {
		return next
	}
	return redactSink{next, e.redact}
}

// redactScenario redacts the text of a scenario's result.
func (e *Engine) redactScenario(r *result.Scenario) {
	if e.redact == nil {
		return
	}
	red := e.redact
	r.Error, r.SkipReason = red.String(r.Error), red.String(r.SkipReason)
	for i := range r.Errors {
		r.Errors[i].Error = red.String(r.Errors[i].Error)
	}
	for i := range r.Warnings {
		r.Warnings[i] = red.String(r.Warnings[i])
	}
	redact.Params(red, r.Params) // masked whole, or kept: a parameter is the scenario's identity
	redact.Environment(red, r.Environment)
	redact.Extra(red, &r.Extra)
}
