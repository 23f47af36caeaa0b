// Package tracing exports a run as OpenTelemetry traces over OTLP/HTTP: one span for the run, one
// per scenario below it with the scenario's metrics as attributes, and below that one per
// iteration or request (calls.go), at most a set number per second. It is the only package that
// imports the OpenTelemetry SDK.
//
// The endpoint comes from --otlp-endpoint or from the standard OTEL_EXPORTER_OTLP_ENDPOINT and
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT variables (with OTEL_EXPORTER_OTLP_HEADERS and the other
// OTEL_EXPORTER_OTLP_* settings the exporter reads itself); the sampler from OTEL_TRACES_SAMPLER
// and OTEL_TRACES_SAMPLER_ARG.
package tracing

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

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

// EnvEndpoint returns the URL traces go to by the OTEL_EXPORTER_OTLP_* environment read through
// lookup, as the OpenTelemetry specification defines it for OTLP/HTTP, and the variable it came
// from: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else OTEL_EXPORTER_OTLP_ENDPOINT (a base URL)
// with /v1/traces appended; "" when neither is set.
func EnvEndpoint(lookup func(string) (string, bool)) (endpoint, name string) {
	if v, ok := lookup("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); ok && v != "" {
		return v, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	}
	if v, ok := lookup("OTEL_EXPORTER_OTLP_ENDPOINT"); ok && v != "" {
		return strings.TrimSuffix(v, "/") + "/v1/traces", "OTEL_EXPORTER_OTLP_ENDPOINT"
	}
	return "", ""
}

// Run is the trace of one run, a run.Observer: each scenario becomes a span (ScenarioStarted,
// ScenarioFinished), and each iteration or request a span below its scenario's (CallHook).
type Run struct {
	tp      *sdktrace.TracerProvider
	exp     *countingExporter
	tracer  trace.Tracer
	ctx     context.Context // carries the run span
	runSpan trace.Span
	rate    float64       // call spans per second and scenario
	timeout time.Duration // bounds each export and the flush in Finish

	mu    sync.Mutex
	spans map[string]*scenarioTrace // scenario ID -> open scenario
}

// scenarioTrace is a scenario's open span and the hook that records its calls.
type scenarioTrace struct {
	span  trace.Span
	ctx   context.Context // carries span
	calls *calls          // nil until the engine asks for the hook
}

// DefaultSpanRate is the most iteration or request spans recorded per second in a scenario,
// unless WithSpanRate says otherwise (--otlp-span-rate).
const DefaultSpanRate = 1000

// Option configures Start.
type Option func(*config)

type config struct {
	rate     float64
	lookup   func(string) (string, bool)
	exporter sdktrace.SpanExporter // instead of OTLP (tests and benchmarks)
}

// WithSpanRate caps the iteration or request spans of each scenario at n per second (a token
// bucket holding one second's worth); the calls past it get no span and are counted on the
// scenario's span. 0 records none.
func WithSpanRate(n float64) Option { return func(c *config) { c.rate = n } }

// WithLookupEnv sets where OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG and the endpoint
// (EnvEndpoint) are read from (os.LookupEnv otherwise). The exporter's other settings
// (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, ...) it reads from the process's environment.
func WithLookupEnv(lookup func(string) (string, bool)) Option {
	return func(c *config) { c.lookup = lookup }
}

// Start opens the run span. endpoint is a URL (http://host:4318, a path /v1/traces is added when
// absent) or "" for the endpoint of the OTEL_EXPORTER_OTLP_* environment (EnvEndpoint).
func Start(ctx context.Context, endpoint, version string, opts ...Option) (*Run, error) {
	c := config{rate: DefaultSpanRate, lookup: os.LookupEnv}
	for _, o := range opts {
		o(&c)
	}
	if c.rate < 0 || math.IsNaN(c.rate) || math.IsInf(c.rate, 0) {
		return nil, fmt.Errorf("--otlp-span-rate %v: want a number of spans per second, 0 or more", c.rate)
	}
	sampler, err := Sampler(c.lookup)
	if err != nil {
		return nil, err
	}
	timeout, err := Timeout(c.lookup)
	if err != nil {
		return nil, err
	}
	if err := checkProtocol(c.lookup); err != nil {
		return nil, err
	}
	exp := c.exporter
	if exp == nil {
		opts := []otlptracehttp.Option{otlptracehttp.WithTimeout(timeout)}
		u, what := endpoint, "--otlp-endpoint"
		if endpoint != "" {
			// The exporter posts to the URL as given; a bare http://host:4318 gets the path
			// collectors listen on.
			if p, err := url.Parse(endpoint); err == nil && (p.Path == "" || p.Path == "/") {
				p.Path = "/v1/traces"
				u = p.String()
			}
		} else {
			// The exporter would read the process's environment; the run's may be another
			// (a Go program's run.Env, the CLI's injected environment).
			u, what = EnvEndpoint(c.lookup)
		}
		if u != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(u))
		}
		if exp, err = otlptracehttp.New(ctx, opts...); err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, u, err)
		}
	}
	// The SDK logs a failed background export to the process's stderr, with the endpoint's URL
	// unredacted and outside the run's log; the failure that matters, spans not delivered by the
	// end, is Finish's error, which the run reports as a warning.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	res := resource.NewSchemaless(semconv.ServiceName("inferbench"), semconv.ServiceVersion(version))
	counted := &countingExporter{SpanExporter: exp}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(counted, sdktrace.WithExportTimeout(timeout)), sdktrace.WithResource(res),
		sdktrace.WithSampler(sampler), sdktrace.WithIDGenerator(idGenerator{}))
	r := &Run{tp: tp, exp: counted, tracer: tp.Tracer("github.com/inferbench/inferbench"), rate: c.rate, timeout: timeout, spans: map[string]*scenarioTrace{}}
	r.ctx, r.runSpan = r.tracer.Start(ctx, "inferbench run")
	return r, nil
}

// DefaultTimeout bounds each export and the flush at the end of a run when neither
// OTEL_EXPORTER_OTLP_TRACES_TIMEOUT nor OTEL_EXPORTER_OTLP_TIMEOUT sets it: a collector that
// accepts connections and never answers costs a run at most this long. (The specification's
// default is 10 s; a benchmark run should not wait that long for its telemetry.)
const DefaultTimeout = 2 * time.Second

// Timeout returns the export deadline the OTEL_EXPORTER_OTLP_TRACES_TIMEOUT or
// OTEL_EXPORTER_OTLP_TIMEOUT variable gives, in milliseconds as the specification defines them,
// else DefaultTimeout. A value that is not a positive number of milliseconds is an error.
func Timeout(lookup func(string) (string, bool)) (time.Duration, error) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"} {
		v, ok := lookup(k)
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(ms > 0) || math.IsInf(ms, 0) || ms > 1e9 {
			return 0, fmt.Errorf("%s=%q: want a deadline in milliseconds, e.g. 2000", k, v)
		}
		return time.Duration(ms * float64(time.Millisecond)), nil
	}
	return DefaultTimeout, nil
}

// checkProtocol refuses an OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL
// other than http/protobuf, the one inferbench speaks: HTTP sent to a gRPC port fails only at the
// end of the run, as a warning, with no spans delivered.
func checkProtocol(lookup func(string) (string, bool)) error {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		v, ok := lookup(k)
		v = strings.TrimSpace(v)
		if !ok || v == "" {
			continue
		}
		if v != "http/protobuf" {
			return fmt.Errorf("%s=%s: inferbench exports OTLP over HTTP (http/protobuf) only; point the endpoint at the collector's OTLP/HTTP port (4318) and set %s=http/protobuf or unset it", k, v, k)
		}
		return nil
	}
	return nil
}

// Sampler returns the sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name, as the
// OpenTelemetry specification defines them: always_on, always_off, traceidratio,
// parentbased_always_on (the default), parentbased_always_off, parentbased_traceidratio; the
// argument is the ratio, 1 when absent. Unlike the SDK, which falls back to the default, an
// unknown sampler or a bad ratio is an error.
func Sampler(lookup func(string) (string, bool)) (sdktrace.Sampler, error) {
	name, _ := lookup("OTEL_TRACES_SAMPLER")
	name = strings.ToLower(strings.TrimSpace(name))
	arg, _ := lookup("OTEL_TRACES_SAMPLER_ARG")
	arg = strings.TrimSpace(arg)
	ratio := func() (sdktrace.Sampler, error) {
		if arg == "" {
			return sdktrace.TraceIDRatioBased(1), nil
		}
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil || !(v >= 0 && v <= 1) { // NaN too
			return nil, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: want a ratio from 0 to 1 for sampler %s", arg, name)
		}
		return sdktrace.TraceIDRatioBased(v), nil
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "traceidratio":
		return ratio()
	case "parentbased_traceidratio":
		s, err := ratio()
		if err != nil {
			return nil, err
		}
		return sdktrace.ParentBased(s), nil
	}
	return nil, fmt.Errorf("OTEL_TRACES_SAMPLER=%q: not supported (always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio)", name)
}

// ScenarioStarted implements run.ScenarioStarter: the scenario's span starts.
func (r *Run) ScenarioStarted(sc *suite.Scenario, index, total int) {
	ctx, span := r.tracer.Start(r.ctx, "scenario "+sc.ID(), trace.WithAttributes(
		attribute.String("inferbench.benchmark", sc.Benchmark.Name),
		attribute.String("inferbench.scenario", sc.Name),
		attribute.String("inferbench.subject", sc.Benchmark.Kind),
		attribute.String("inferbench.model", sc.Model()),
		attribute.Int("inferbench.index", index+1),
	))
	r.mu.Lock()
	r.spans[sc.ID()] = &scenarioTrace{span: span, ctx: ctx}
	r.mu.Unlock()
}

// ScenarioFinished implements run.ScenarioFinisher: the metrics become attributes (a summary as its
// median, p95 and p99; a value as itself) and the span ends.
func (r *Run) ScenarioFinished(s *result.Scenario) {
	r.mu.Lock()
	st, ok := r.spans[s.ID()]
	delete(r.spans, s.ID())
	r.mu.Unlock()
	if !ok {
		return
	}
	span := st.span
	span.SetAttributes(ScenarioAttributes(s)...)
	if st.calls != nil {
		span.SetAttributes(
			attribute.Int64("inferbench.call_spans", st.calls.recorded.Load()),
			attribute.Int64("inferbench.call_spans_dropped", st.calls.dropped.Load()))
	}
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
	// The flush has the export's deadline: a collector that accepts the connection and never
	// answers costs the run this long, not the SDK's 30 s (OTEL_BSP_EXPORT_TIMEOUT).
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if err := r.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("spans not delivered within %v (OTEL_EXPORTER_OTLP_TIMEOUT): %w", r.timeout, err)
	}
	// The exporter's own deadline is the same as the flush's: when it ends an export first, the
	// SDK hands the error to the (silenced) global handler and Shutdown returns nil.
	if n, err := r.exp.lost(); n > 0 {
		return fmt.Errorf("%d spans not delivered within %v (OTEL_EXPORTER_OTLP_TIMEOUT): %w", n, r.timeout, err)
	}
	return nil
}

// countingExporter remembers the spans whose export failed: the SDK does not retry them, so they
// are lost, whichever deadline ended the export.
type countingExporter struct {
	sdktrace.SpanExporter
	mu     sync.Mutex
	failed int
	last   error
}

// ExportSpans implements sdktrace.SpanExporter.
func (e *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		e.mu.Lock()
		e.failed += len(spans)
		e.last = err
		e.mu.Unlock()
	}
	return err
}

// lost returns how many spans failed to export, and the last error.
func (e *countingExporter) lost() (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.failed, e.last
}
