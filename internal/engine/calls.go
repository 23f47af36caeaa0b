package engine

import (
	"context"
	"time"

	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// CallHook sees one scenario's calls, from the driver's goroutines (concurrently under a serving
// load). Both methods run outside the call's timed region: the subject takes its timestamps
// inside Do, after Before has returned and before After is called. The calls of a
// subject.Batcher, made in one round trip, pass through both once the batch has returned.
type CallHook interface {
	// Before runs just before a call and returns the context the call runs under, derived from
	// ctx (one carrying a trace context the subject propagates, say).
	Before(ctx context.Context, r subject.Request) context.Context
	// After runs once the call has returned, with the context Before returned for it.
	After(ctx context.Context, c Call)
}

// Call is one completed call, as a CallHook sees it.
type Call struct {
	Request     subject.Request
	Observation subject.Observation
	Err         error
	// ErrorKind groups Err for counting, as the results do ("http_503", "timeout"); "" when Err
	// is nil.
	ErrorKind string
}

// Latency is the call's latency: the subject's own timing of it when it reported one
// ("latency_ms" in Observation.Values), else from Start to End.
func (c Call) Latency() time.Duration {
	if v, ok := c.Observation.Values["latency_ms"]; ok {
		return time.Duration(v * 1e6)
	}
	return c.Observation.End.Sub(c.Observation.Start)
}

// callHooks returns the hooks the engine's observers have for a scenario.
func (e *Engine) callHooks(sc *suite.Scenario, cfg load.Config) []CallHook {
	var hs []CallHook
	for _, h := range e.hooks {
		if h.CallHook == nil {
			continue
		}
		if hook := h.CallHook(sc, cfg); hook != nil {
			hs = append(hs, hook)
		}
	}
	return hs
}

// hooked returns s with every call passing through the hooks; s itself when there are none, so a
// run without hooks pays nothing. A subject.Batcher stays one.
func hooked(s subject.Subject, hooks []CallHook) subject.Subject {
	if len(hooks) == 0 {
		return s
	}
	h := hookedSubject{s, hooks}
	if b, ok := s.(subject.Batcher); ok {
		return hookedBatcher{h, b}
	}
	return h
}

// hookedSubject calls its hooks around each call.
type hookedSubject struct {
	subject.Subject
	hooks []CallHook
}

// Unwrap returns the subject the hooks wrap, for the optional abilities a load driver looks for
// (load.Arrivals).
func (s hookedSubject) Unwrap() subject.Subject { return s.Subject }

func (s hookedSubject) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	for _, h := range s.hooks {
		ctx = h.Before(ctx, r)
	}
	o, err := s.Subject.Do(ctx, r)
	c := Call{Request: r, Observation: o, Err: err}
	if err != nil {
		c.ErrorKind = errorKind(err)
	}
	for _, h := range s.hooks {
		h.After(ctx, c)
	}
	return o, err
}

// hookedBatcher is a hookedSubject over a subject.Batcher: a batch's calls reach the hooks' After
// once the batch has returned.
type hookedBatcher struct {
	hookedSubject
	b subject.Batcher
}

func (s hookedBatcher) DoBatch(ctx context.Context, r subject.Request, n int) ([]subject.Observation, error) {
	obs, err := s.b.DoBatch(ctx, r, n)
	for i, o := range obs {
		s.after(ctx, Call{Request: subject.Request{Index: r.Index + i, Warmup: r.Warmup}, Observation: o})
	}
	if err != nil { // the call that failed, which the driver counts
		s.after(ctx, Call{Request: subject.Request{Index: r.Index + len(obs), Warmup: r.Warmup}, Err: err, ErrorKind: errorKind(err)})
	}
	return obs, err
}

// after passes a call of a batch through the hooks, Before and After, once the batch is done.
func (s hookedBatcher) after(ctx context.Context, c Call) {
	for _, h := range s.hooks {
		ctx = h.Before(ctx, c.Request)
	}
	for _, h := range s.hooks {
		h.After(ctx, c)
	}
}

var (
	_ subject.Subject = hookedSubject{}
	_ subject.Batcher = hookedBatcher{}
)
