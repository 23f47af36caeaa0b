package cli

import (
	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/internal/stage/tracing"
	"github.com/inferbench/inferbench/run"
)

// otlpFlags are run's trace flags; run.Run starts and finishes the trace.
type otlpFlags run.Tracing

// register adds --otlp-endpoint and --otlp-span-rate.
func (t *otlpFlags) register(f *pflag.FlagSet) {
	f.StringVar(&t.Endpoint, "otlp-endpoint", "", "export the run as OpenTelemetry traces to this OTLP/HTTP endpoint (http://host:4318/v1/traces); the standard OTEL_EXPORTER_OTLP_* and OTEL_TRACES_SAMPLER environment works too")
	f.Float64Var(&t.SpanRate, "otlp-span-rate", tracing.DefaultSpanRate, "with --otlp-endpoint: at most this many iteration or request spans per second in each scenario; the calls past it get none and are counted on the scenario's span (0: none)")
}

// tracing is run.Options.Tracing: the flag's 0 (no call spans) is run.Tracing's negative rate.
func (t otlpFlags) tracing() (run.Tracing, error) {
	switch {
	case t.SpanRate < 0:
		return run.Tracing{}, usageErr("--otlp-span-rate %v: want a number of spans per second, 0 or more", t.SpanRate)
	case t.SpanRate == 0:
		t.SpanRate = -1
	}
	return run.Tracing(t), nil
}
