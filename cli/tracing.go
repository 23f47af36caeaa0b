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

// otlpFlag registers --otlp-endpoint on run.
func otlpFlag(cmd *cobra.Command, s *string) {
	cmd.Flags().StringVar(s, "otlp-endpoint", "", "export the run as OpenTelemetry traces to this OTLP/HTTP endpoint (http://host:4318/v1/traces); the standard OTEL_EXPORTER_OTLP_* environment works too")
}

// withTracing starts the run's trace when asked for and returns the listener to use (the given
// one, and the trace) and a function that finishes the trace.
func withTracing(ctx context.Context, o *IO, endpoint string, l engine.Listener) (engine.Listener, func(*result.Run), error) {
	if !tracing.Enabled(endpoint, o.LookupEnv) {
		return l, func(*result.Run) {}, nil
	}
	tr, err := tracing.Start(ctx, endpoint, Version)
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

// listenerPair tells two listeners.
type listenerPair [2]engine.Listener

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
