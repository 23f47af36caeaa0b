package tracing

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/inferbench/inferbench/internal/base/unit"
	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// CallHook is the trace's call hook, one of a run's events (run/observer.go): it returns the hook that records the calls of a scenario
// whose span is open, as spans named "request" under a serving load or against an openai
// subject, "iteration" otherwise.
//
// Each span is recorded after its call has returned, from the call's own timestamps, so that
// tracing adds nothing to the timed region. A request's span ID is chosen before the call,
// though, and the call runs under a context carrying it, so that a subject that propagates the
// trace context (the openai subject's traceparent header) names the request span as the
// server's parent.
func (r *Run) CallHook(sc *suite.Scenario, cfg load.Config) engine.CallHook {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.spans[sc.ID()]
	if !ok {
		return nil
	}
	c := &calls{tracer: r.tracer, ctx: st.ctx, span: st.span, parent: st.span.SpanContext(), name: "iteration",
		kind: trace.SpanKindInternal, bucket: newBucket(r.rate, time.Now())}
	if cfg.Serving() || sc.Benchmark.Kind == "openai" {
		c.name, c.kind, c.propagate = "request", trace.SpanKindClient, true
	}
	st.calls = c
	return c
}

// calls records one scenario's calls as spans below the scenario's.
type calls struct {
	tracer trace.Tracer
	ctx    context.Context   // carries the scenario span
	span   trace.Span        // the scenario's
	parent trace.SpanContext // the scenario span's
	name   string
	kind   trace.SpanKind
	// propagate: the calls are requests, which run under a trace context a subject may send on.
	// Iterations run under the driver's own: no allocation, and their span IDs are chosen when
	// they are recorded.
	propagate bool

	mu     sync.Mutex
	bucket bucket

	recorded, dropped atomic.Int64
}

var _ engine.CallHook = (*calls)(nil)

// Before gives a request a span ID when the scenario is sampled and the rate allows one more span,
// and returns a context carrying it; a request that gets none runs under the scenario span's
// context (which a server then joins).
func (c *calls) Before(ctx context.Context, _ subject.Request) context.Context {
	if !c.propagate {
		return ctx
	}
	if !c.parent.IsSampled() || !c.take() {
		return trace.ContextWithSpan(ctx, c.span)
	}
	return trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: c.parent.TraceID(), SpanID: newSpanID(), TraceFlags: c.parent.TraceFlags(),
	}))
}

// After records the call's span: a request's with the ID Before chose, if it chose one; an
// iteration's if the rate allows one more.
func (c *calls) After(ctx context.Context, call engine.Call) {
	var id trace.SpanID
	if c.propagate {
		sc := trace.SpanContextFromContext(ctx)
		if sc.TraceID() != c.parent.TraceID() || sc.SpanID() == c.parent.SpanID() {
			return // Before gave it no span
		}
		id = sc.SpanID()
	} else if !c.parent.IsSampled() || !c.take() {
		return
	}
	c.record(id, &call)
}

// take takes a token from the bucket, or counts the call as dropped.
func (c *calls) take() bool {
	c.mu.Lock()
	ok := c.bucket.take(time.Now())
	c.mu.Unlock()
	if !ok {
		c.dropped.Add(1)
	}
	return ok
}

// spanIDKey carries, to idGenerator, the ID chosen for the span being started.
type spanIDKey struct{}

func (c *calls) record(id trace.SpanID, call *engine.Call) {
	o := &call.Observation
	start, end := o.Start, o.End
	if start.IsZero() || end.IsZero() { // failed before it was sent: a point in time
		if end.IsZero() {
			end = time.Now()
		}
		start = end
	}
	phase := "measure"
	if call.Request.Warmup {
		phase = "warmup"
	}
	status := "ok"
	if call.Err != nil {
		status = "error"
	}
	kv := make([]attribute.KeyValue, 0, 9)
	kv = append(kv,
		attribute.Int("inferbench.index", call.Request.Index),
		attribute.String("inferbench.phase", phase),
		attribute.String("inferbench.status", status))
	if !o.Start.IsZero() {
		kv = append(kv, attribute.Float64("inferbench.latency_ms", unit.MS(call.Latency())))
	}
	if !o.FirstToken.IsZero() {
		kv = append(kv, attribute.Float64("inferbench.ttft_ms", unit.MS(o.FirstToken.Sub(o.Start))))
	}
	if o.InputTokens > 0 {
		kv = append(kv, attribute.Int("inferbench.input_tokens", o.InputTokens))
	}
	if o.OutputTokens > 0 {
		kv = append(kv, attribute.Int("inferbench.output_tokens", o.OutputTokens))
	}
	if o.Items > 1 {
		kv = append(kv, attribute.Int("inferbench.items", o.Items))
	}
	if call.Err != nil {
		kv = append(kv, attribute.String("inferbench.error_kind", call.ErrorKind))
	}
	ctx := c.ctx
	if id.IsValid() {
		ctx = context.WithValue(ctx, spanIDKey{}, id)
	}
	_, span := c.tracer.Start(ctx, c.name, trace.WithTimestamp(start), trace.WithSpanKind(c.kind), trace.WithAttributes(kv...))
	if call.Err != nil {
		// The kind, not the message: a message may quote what the results redact.
		span.SetStatus(codes.Error, call.ErrorKind)
	}
	span.End(trace.WithTimestamp(end))
	c.recorded.Add(1)
}

// bucket is a token bucket: rate tokens a second, holding at most one second's worth (and at
// least one token, unless the rate is 0).
type bucket struct {
	rate, size, tokens float64
	last               time.Time
}

// newBucket returns a full bucket.
func newBucket(rate float64, now time.Time) bucket {
	size := rate
	if rate > 0 {
		size = max(rate, 1)
	}
	return bucket{rate: rate, size: size, tokens: size, last: now}
}

func (b *bucket) take(now time.Time) bool {
	b.tokens = min(b.size, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// idGenerator is the SDK's random generator, except that a span started under a context carrying
// an ID from Before gets that ID.
type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	for !tid.IsValid() {
		binary.NativeEndian.PutUint64(tid[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(tid[8:], rand.Uint64())
	}
	return tid, newSpanID()
}

func (idGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if id, ok := ctx.Value(spanIDKey{}).(trace.SpanID); ok {
		return id
	}
	return newSpanID()
}

func newSpanID() trace.SpanID {
	var id trace.SpanID
	for !id.IsValid() {
		binary.NativeEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}
