package openai

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/inferbench/inferbench/subject"
)

// TestTraceparent: a request made under a trace context carries it as a W3C traceparent header
// (version, trace ID, parent span ID, flags); one made without carries none.
func TestTraceparent(t *testing.T) {
	f := newFake(t, 200, role+content("hi")+finish+done)
	s := open(t, Config{URL: f.URL + "/v1"})
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	if _, err := s.Do(trace.ContextWithSpanContext(context.Background(), sc), subject.Request{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Do(context.Background(), subject.Request{Index: 1}); err != nil {
		t.Fatal(err)
	}
	if got, want := f.hdr(0).Get("traceparent"), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"; got != want {
		t.Errorf("traceparent %q, want %q", got, want)
	}
	if h := f.hdr(1); h.Get("traceparent") != "" || h.Get("tracestate") != "" {
		t.Errorf("request without a trace carries traceparent %q tracestate %q", h.Get("traceparent"), h.Get("tracestate"))
	}
}
