package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/engine"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
	"github.com/inferbench/inferbench/tracing"
)

// otlpFlags are run's trace flags.
type otlpFlags struct {
	endpoint string
	rate     float64
}

// otlpFlag registers --otlp-endpoint and --otlp-span-rate on run.
func otlpFlag(cmd *cobra.Command, s *otlpFlags) {
	cmd.Flags().StringVar(&s.endpoint, "otlp-endpoint", "", "export the run as OpenTelemetry traces to this OTLP/HTTP endpoint (http://host:4318/v1/traces); the standard OTEL_EXPORTER_OTLP_* and OTEL_TRACES_SAMPLER environment works too")
	cmd.Flags().Float64Var(&s.rate, "otlp-span-rate", tracing.DefaultSpanRate, "at most this many iteration or request spans per second in each scenario; the calls past it get none and are counted on the scenario's span (0: none)")
}

// withTracing starts the run's trace when asked for and returns the listener to use (the given
// one, and the trace) and a function that finishes the trace.
func withTracing(ctx context.Context, o *IO, f otlpFlags, l engine.Listener) (engine.Listener, func(*result.Run), error) {
	if !tracing.Enabled(f.endpoint, o.LookupEnv) {
		return l, func(*result.Run) {}, nil
	}
	tr, err := tracing.Start(ctx, f.endpoint, Version, tracing.WithSpanRate(f.rate), tracing.WithLookupEnv(o.LookupEnv))
	if err != nil {
		return l, nil, usageErr("%v", err)
	}
	finish := func(r *result.Run) {
		if err := tr.Finish(context.WithoutCancel(ctx), r); err != nil {
			fmt.Fprintf(o.Stderr, "warning: otlp: %v\n", err)
		}
	}
	if l == nil {
		return tr, finish, nil
	}
	return listenerPair{l, tr}, finish, nil
}

// listenerPair tells two listeners, and has the abilities either has: the trace's call hook and
// the progress bar's Finish.
type listenerPair [2]engine.Listener

func (p listenerPair) CallHook(sc *suite.Scenario, cfg load.Config) engine.CallHook {
	for _, l := range p {
		if h, ok := l.(engine.CallHooker); ok {
			if hook := h.CallHook(sc, cfg); hook != nil {
				return hook
			}
		}
	}
	return nil
}

func (p listenerPair) Finish() {
	for _, l := range p {
		if f, ok := l.(interface{ Finish() }); ok {
			f.Finish()
		}
	}
}

func (p listenerPair) ScenarioStarted(sc *suite.Scenario, index, total int) {
	p[0].ScenarioStarted(sc, index, total)
	p[1].ScenarioStarted(sc, index, total)
}

func (p listenerPair) Observed(sc *suite.Scenario, phase load.Phase, done int) {
	p[0].Observed(sc, phase, done)
	p[1].Observed(sc, phase, done)
}

func (p listenerPair) ScenarioDone(r *result.Scenario) {
	p[0].ScenarioDone(r)
	p[1].ScenarioDone(r)
}
