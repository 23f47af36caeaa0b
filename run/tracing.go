package run

import (
	"context"
	"fmt"
	"math"

	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/internal/stage/tracing"
	"github.com/inferbench/inferbench/result"
)

// Tracing exports the run as OpenTelemetry traces over OTLP/HTTP (docs/tracing.md): a span for
// the run, one per scenario below it, and one per iteration or request below that.
type Tracing struct {
	// Endpoint is the OTLP/HTTP endpoint (--otlp-endpoint), e.g. http://collector:4318/v1/traces;
	// a URL without a path gets /v1/traces. When empty, OTEL_EXPORTER_OTLP_ENDPOINT or
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT in Options.Env turns the export on (the exporter reads
	// the other OTEL_EXPORTER_OTLP_* settings from the process's environment); with neither,
	// nothing is exported.
	Endpoint string
	// SpanRate caps the iteration or request spans of each scenario at this many per second
	// (--otlp-span-rate): 0 is 1,000, a negative number records none (the run
	// and scenario spans only).
	SpanRate float64
}

// trace is the run's trace in progress (nil when the run is not traced).
type trace struct {
	tr *tracing.Run
	p  *pipeline
}

// startTrace opens the run's span when Options.Tracing or the environment asks for traces, and
// adds the trace to the engine's observers: each scenario and each call becomes a span.
func (p *pipeline) startTrace(ctx context.Context) (*trace, error) {
	t := p.o.Tracing
	if !tracing.Enabled(t.Endpoint, p.env.Lookup) {
		return nil, nil
	}
	rate := t.SpanRate
	switch {
	case math.IsNaN(rate) || math.IsInf(rate, 0):
		return nil, exit.Usagef("--otlp-span-rate %v: want a number of spans per second, 0 or more", rate)
	case rate == 0:
		rate = tracing.DefaultSpanRate
	case rate < 0:
		rate = 0
	}
	tr, err := tracing.Start(ctx, t.Endpoint, p.o.Version, tracing.WithSpanRate(rate), tracing.WithLookupEnv(p.env.Lookup))
	if err != nil {
		return nil, exit.Usagef("%v", p.red.Error(err))
	}
	h, _ := engineHooks(tr)
	p.engineOpts = append(p.engineOpts, engine.WithHooks(h))
	return &trace{tr: tr, p: p}, nil
}

// The trace is an observer of the scenarios' events (observer.go).
var (
	_ ScenarioStarter  = (*tracing.Run)(nil)
	_ callHooker       = (*tracing.Run)(nil)
	_ ScenarioFinisher = (*tracing.Run)(nil)
)

// finish ends the run's span with the run's totals (r is nil when the run stopped before it
// began) and flushes every span; an export that fails is a warning on Stderr, never the run's
// error.
func (t *trace) finish(ctx context.Context, r *result.Run) {
	if t == nil {
		return
	}
	if err := t.tr.Finish(context.WithoutCancel(ctx), r); err != nil {
		fmt.Fprintln(t.p.o.Stderr, "inferbench: warning: otlp:", t.p.red.Error(err))
	}
}
