// Package tracing exports a run as OpenTelemetry traces over OTLP/HTTP: one span for the run and
// one per scenario below it, with the scenario's metrics as attributes. It is the only package
// that imports the OpenTelemetry SDK.
//
// The endpoint comes from --otlp-endpoint or from the standard OTEL_EXPORTER_OTLP_ENDPOINT and
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT variables (with OTEL_EXPORTER_OTLP_HEADERS and the other
// OTEL_EXPORTER_OTLP_* settings the exporter reads itself).
package tracing

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/inferbench/inferbench/engine"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// Enabled reports whether traces are asked for: an endpoint flag, or the standard environment.
func Enabled(endpoint string, lookup func(string) (string, bool)) bool {
	if endpoint != "" {
		return true
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		if v, ok := lookup(k); ok && v != "" {
			return true
		}
	}
	return false
}

// Run is the trace of one run. It is an engine.Listener: each scenario becomes a span.
type Run struct {
	tp      *sdktrace.TracerProvider
	tracer  trace.Tracer
	ctx     context.Context // carries the run span
	runSpan trace.Span

	mu    sync.Mutex
	spans map[string]trace.Span // scenario ID -> open span
}

var _ engine.Listener = (*Run)(nil)

// Start opens the run span. endpoint is a URL (http://host:4318, a path /v1/traces is added when
// absent) or "" for the OTEL_EXPORTER_OTLP_* environment the exporter reads.
func Start(ctx context.Context, endpoint, version string) (*Run, error) {
	var opts []otlptracehttp.Option
	if endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(endpoint))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("--otlp-endpoint %s: %w", endpoint, err)
	}
	res := resource.NewSchemaless(semconv.ServiceName("inferbench"), semconv.ServiceVersion(version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	r := &Run{tp: tp, tracer: tp.Tracer("github.com/inferbench/inferbench"), spans: map[string]trace.Span{}}
	r.ctx, r.runSpan = r.tracer.Start(ctx, "inferbench run")
	return r, nil
}

// ScenarioStarted implements engine.Listener.
func (r *Run) ScenarioStarted(sc *suite.Scenario, index, total int) {
	_, span := r.tracer.Start(r.ctx, "scenario "+sc.ID(), trace.WithAttributes(
		attribute.String("inferbench.benchmark", sc.Benchmark.Name),
		attribute.String("inferbench.scenario", sc.Name),
		attribute.String("inferbench.subject", sc.Benchmark.Kind),
		attribute.String("inferbench.model", sc.Benchmark.Model),
		attribute.Int("inferbench.index", index+1),
	))
	r.mu.Lock()
	r.spans[sc.ID()] = span
	r.mu.Unlock()
}

// Observed implements engine.Listener.
func (r *Run) Observed(*suite.Scenario, load.Phase, int) {}

// ScenarioDone implements engine.Listener: the metrics become attributes (a summary as its
// median, p95 and p99; a value as itself) and the span ends.
func (r *Run) ScenarioDone(s *result.Scenario) {
	r.mu.Lock()
	span, ok := r.spans[s.ID()]
	delete(r.spans, s.ID())
	r.mu.Unlock()
	if !ok {
		return
	}
	span.SetAttributes(ScenarioAttributes(s)...)
	if s.Status == result.StatusFailed {
		span.SetStatus(codes.Error, s.Error)
	}
	span.End()
}

// ScenarioAttributes are a scenario's status and metrics as span attributes.
func ScenarioAttributes(s *result.Scenario) []attribute.KeyValue {
	kv := []attribute.KeyValue{attribute.String("inferbench.status", s.Status)}
	if s.SkipReason != "" {
		kv = append(kv, attribute.String("inferbench.skip_reason", s.SkipReason))
	}
	names := make([]string, 0, len(s.Metrics))
	for n := range s.Metrics {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		m := s.Metrics[n]
		switch {
		case m.Summary != nil:
			kv = append(kv,
				attribute.Float64("inferbench."+n+".p50", m.Summary.Median),
				attribute.Float64("inferbench."+n+".p95", m.Summary.P95),
				attribute.Float64("inferbench."+n+".p99", m.Summary.P99),
				attribute.Int("inferbench."+n+".n", m.Summary.N))
		case m.Value != nil:
			kv = append(kv, attribute.Float64("inferbench."+n, *m.Value))
		}
	}
	return kv
}

// Finish ends the run span with the run's totals and flushes every span to the collector.
func (r *Run) Finish(ctx context.Context, run *result.Run) error {
	if run != nil {
		r.runSpan.SetAttributes(
			attribute.String("inferbench.run_id", run.ID),
			attribute.Int("inferbench.scenarios", run.Summary.Total),
			attribute.Int("inferbench.failed", run.Summary.Failed))
	}
	r.runSpan.End()
	return r.tp.Shutdown(ctx)
}
