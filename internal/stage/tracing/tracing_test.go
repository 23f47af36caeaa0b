package tracing

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/propagation"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/inferbench/inferbench/internal/engine"
	_ "github.com/inferbench/inferbench/internal/kind/mock"
	_ "github.com/inferbench/inferbench/internal/kind/openai"
	"github.com/inferbench/inferbench/internal/testkit/otlptest"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// TestOTLPRoundTrip: a run's spans reach an OTLP receiver: the run span, and below it a span per
// scenario carrying its metrics as attributes.
func TestOTLPRoundTrip(t *testing.T) {
	rc, url := otlptest.Start(t)
	ctx := context.Background()
	tr, err := Start(ctx, url+"/v1/traces", "test")
	if err != nil {
		t.Fatal(err)
	}
	b := &suite.Benchmark{Name: "llm-mock", Kind: "mock", Model: "tiny"}
	sc := &suite.Scenario{Benchmark: b, Name: "batch_size=1"}
	tr.ScenarioStarted(sc, 0, 1)
	lat := result.NewMetric("latency_ms")
	lat.Summary = &stats.Summary{N: 20, Median: 45, P95: 48, P99: 50}
	tr.ScenarioFinished(&result.Scenario{Benchmark: "llm-mock", Scenario: "batch_size=1", Status: result.StatusOK,
		Metrics: map[string]result.Metric{"latency_ms": lat}})
	if err := tr.Finish(ctx, &result.Run{ID: "r1", Summary: result.Summary{Total: 1}}); err != nil {
		t.Fatal(err)
	}

	spans := rc.Spans()
	byName := map[string]*tracepb.Span{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	run, scen := byName["inferbench run"], byName["scenario llm-mock/batch_size=1"]
	if run == nil || scen == nil {
		t.Fatalf("received spans %v, want the run and the scenario", spans)
	}
	if string(scen.ParentSpanId) != string(run.SpanId) || string(scen.TraceId) != string(run.TraceId) {
		t.Errorf("scenario span is not the run span's child")
	}
	attrs := map[string]bool{}
	for _, kv := range scen.Attributes {
		attrs[kv.Key] = true
	}
	for _, kv := range scen.Attributes {
		if kv.Key == "inferbench.latency_ms.p50" && kv.Value.GetDoubleValue() != 45 {
			t.Errorf("latency_ms.p50 attribute %v, want 45", kv.Value)
		}
	}
	if !attrs["inferbench.latency_ms.p99"] || !attrs["inferbench.status"] {
		t.Errorf("scenario span attributes %v lack the latency metrics", attrs)
	}
}

// runScenarios runs definitions src on the mock subject with the trace tr listening, and finishes
// the trace.
func runScenarios(t *testing.T, tr *Run, src string) []result.Scenario {
	t.Helper()
	bs, err := suite.Parse("benches/x.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	var scs []*suite.Scenario
	for _, b := range bs {
		scs = append(scs, b.Expand(nil)...)
	}
	var out []result.Scenario
	e := engine.New(engine.WithChecker(&suite.Checker{EnableMock: true}), engine.WithHooks(hooksOf(tr)))
	ctx := context.Background()
	if err := e.Run(ctx, scs, func(r result.Scenario) { out = append(out, r) }); err != nil {
		t.Fatal(err)
	}
	if err := tr.Finish(ctx, &result.Run{ID: "r1", Summary: result.Summary{Total: len(out)}}); err != nil {
		t.Fatal(err)
	}
	return out
}

func attrMap(s *tracepb.Span) map[string]*commonpb.AnyValue {
	m := map[string]*commonpb.AnyValue{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

const treeSrc = `name: single
subject: {kind: mock, latency_ms: 1, fail_rate: 0.3}
load: {warmup_iterations: 1, measurement_iterations: 8, max_error_rate: 1}
---
name: serving
subject: {kind: mock, latency_ms: 1, generate: {output_tokens: 3, ttft_ms: 1, itl_ms: 1}}
load: {mode: concurrency, concurrency: 3, warmup_iterations: 0, measurement_iterations: 9}
`

// TestOTLPSpanTree: run → scenario → iteration (single driver) or request (serving driver), each
// call's span within its own start and end, with its figures as attributes.
func TestOTLPSpanTree(t *testing.T) {
	rc, url := otlptest.Start(t)
	tr, err := Start(context.Background(), url+"/v1/traces", "test", WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	res := runScenarios(t, tr, treeSrc)

	spans := rc.Spans()
	byID := map[string]*tracepb.Span{}
	var run *tracepb.Span
	for _, s := range spans {
		byID[string(s.SpanId)] = s
		if s.Name == "inferbench run" {
			run = s
		}
	}
	if run == nil {
		t.Fatalf("no run span among %d", len(spans))
	}
	calls := map[string]int{} // scenario span name -> call spans below it
	failed := 0
	for _, s := range spans {
		if string(s.TraceId) != string(run.TraceId) {
			t.Errorf("span %s in another trace", s.Name)
		}
		parent := byID[string(s.ParentSpanId)]
		switch s.Name {
		case "inferbench run":
			continue
		case "iteration", "request":
			if parent == nil || !strings.HasPrefix(parent.Name, "scenario ") {
				t.Fatalf("%s span's parent is %v, want a scenario span", s.Name, parent)
			}
			calls[parent.Name]++
			if parent.StartTimeUnixNano > s.StartTimeUnixNano || s.EndTimeUnixNano > parent.EndTimeUnixNano || s.StartTimeUnixNano > s.EndTimeUnixNano {
				t.Errorf("%s span [%d, %d] not within its scenario's [%d, %d]", s.Name, s.StartTimeUnixNano, s.EndTimeUnixNano, parent.StartTimeUnixNano, parent.EndTimeUnixNano)
			}
			a := attrMap(s)
			for _, k := range []string{"inferbench.index", "inferbench.phase", "inferbench.status"} {
				if a[k] == nil {
					t.Errorf("%s span lacks %s: %v", s.Name, k, a)
				}
			}
			if a["inferbench.status"].GetStringValue() == "error" {
				failed++
				if a["inferbench.error_kind"] == nil || s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
					t.Errorf("failed call's span: attributes %v, status %v", a, s.Status)
				}
				continue
			}
			lat := a["inferbench.latency_ms"].GetDoubleValue()
			if d := float64(s.EndTimeUnixNano-s.StartTimeUnixNano) / 1e6; lat < 0.5 || math.Abs(lat-d) > 1e-3 {
				t.Errorf("%s latency_ms %v, span lasts %v ms", s.Name, lat, d)
			}
			if s.Name == "request" && (a["inferbench.ttft_ms"].GetDoubleValue() <= 0 || a["inferbench.output_tokens"].GetIntValue() != 3) {
				t.Errorf("request span lacks ttft_ms and output_tokens: %v", a)
			}
		default:
			if parent != run {
				t.Errorf("%s span's parent is %v, want the run span", s.Name, parent)
			}
			a := attrMap(s)
			if a["inferbench.latency_ms.p50"] == nil || a["inferbench.call_spans"] == nil || a["inferbench.call_spans_dropped"].GetIntValue() != 0 {
				t.Errorf("%s span attributes %v", s.Name, a)
			}
		}
	}
	single, serving := res[0], res[1]
	want := map[string]int{
		"scenario single/default":  single.Iterations.Warmup + single.Iterations.Measured,
		"scenario serving/default": serving.Iterations.Measured,
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("call spans per scenario (-want +got):\n%s", diff)
	}
	if failed == 0 || single.Iterations.Failed == 0 {
		t.Errorf("no failed iteration to check (%d in the result)", single.Iterations.Failed)
	}
}

func noEnv(string) (string, bool) { return "", false }

// TestSpanRate: past --otlp-span-rate, calls get no span, and the scenario's span says how many.
func TestSpanRate(t *testing.T) {
	rc, url := otlptest.Start(t)
	tr, err := Start(context.Background(), url, "test", WithLookupEnv(noEnv), WithSpanRate(3))
	if err != nil {
		t.Fatal(err)
	}
	res := runScenarios(t, tr, `name: fast
subject: {kind: mock, latency_ms: 0.01}
load: {warmup_iterations: 0, measurement_iterations: 200}
`)
	var calls int64
	var scen *tracepb.Span
	for _, s := range rc.Spans() {
		switch s.Name {
		case "iteration":
			calls++
		case "scenario fast/default":
			scen = s
		}
	}
	if scen == nil {
		t.Fatal("no scenario span")
	}
	a := attrMap(scen)
	recorded, dropped := a["inferbench.call_spans"].GetIntValue(), a["inferbench.call_spans_dropped"].GetIntValue()
	n := int64(res[0].Iterations.Measured)
	// The bucket holds 3 and refills at 3 a second: 200 calls of 10 µs leave most without a span.
	if recorded != calls || recorded+dropped != n || recorded < 3 || recorded > 10 {
		t.Errorf("%d calls: %d spans received, scenario says %d recorded and %d dropped", n, calls, recorded, dropped)
	}
}

// TestSampler: OTEL_TRACES_SAMPLER and its argument choose the sampler; always_off exports nothing.
func TestSampler(t *testing.T) {
	for _, tc := range []struct {
		name, arg string
		want      string // the sampler's description; "" for an error
	}{
		{"", "", "ParentBased{root:AlwaysOnSampler"},                              // the default
		{"always_off", "", "AlwaysOffSampler"},                                    // plain
		{"TraceIdRatio", " 0.25 ", "TraceIDRatioBased{0.25}"},                     // case and spaces
		{"parentbased_traceidratio", "", "ParentBased{root:TraceIDRatioBased{1}"}, // ratio 1 when absent
		{"traceidratio", "2", ""},                                                 // out of range
		{"traceidratio", "half", ""},                                              // not a number
		{"traceidratio", "NaN", ""},                                               // NaN passed the range check
		{"jaeger_remote", "", ""},                                                 // not supported
	} {
		env := map[string]string{"OTEL_TRACES_SAMPLER": tc.name, "OTEL_TRACES_SAMPLER_ARG": tc.arg}
		s, err := Sampler(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%q %q: sampler %s, want an error", tc.name, tc.arg, s.Description())
		case tc.want != "" && err != nil:
			t.Errorf("%q %q: %v", tc.name, tc.arg, err)
		case tc.want != "" && !strings.HasPrefix(s.Description(), tc.want):
			t.Errorf("%q %q: sampler %s, want %s", tc.name, tc.arg, s.Description(), tc.want)
		}
	}

	rc, url := otlptest.Start(t)
	off := func(k string) (string, bool) { return "always_off", k == "OTEL_TRACES_SAMPLER" }
	tr, err := Start(context.Background(), url, "test", WithLookupEnv(off))
	if err != nil {
		t.Fatal(err)
	}
	runScenarios(t, tr, treeSrc)
	if n := len(rc.Spans()); n != 0 {
		t.Errorf("always_off exported %d spans", n)
	}
}

// TestTraceparentJoinsRequestSpan: an openai subject's requests carry W3C traceparent naming
// their request span (same trace ID, the span's ID as parent) when the run is traced, and no
// header when it is not.
func TestTraceparentJoinsRequestSpan(t *testing.T) {
	var mu sync.Mutex
	var parents []string // traceparent of each request the server got
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet { // no model list: the subject asks for max_tokens alone, unprobed
			http.NotFound(w, r)
			return
		}
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		parents = append(parents, r.Header.Get("traceparent"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`+"\n\n"+
			`data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`+"\n\ndata: [DONE]\n\n")
	}))
	defer server.Close()
	src := "name: chat\nsubject: {kind: openai, url: " + server.URL + "/v1, model: m}\n" +
		"load: {mode: concurrency, concurrency: 2, warmup_iterations: 0, measurement_iterations: 6}\n"

	// Not traced: no header.
	bs, err := suite.Parse("benches/x.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := engine.New().RunScenario(context.Background(), bs[0].Expand(nil)[0]); r.Status != result.StatusOK {
		t.Fatalf("untraced run: %s %s", r.Status, r.Error)
	}
	mu.Lock()
	for _, p := range parents {
		if p != "" {
			t.Errorf("untraced request carries traceparent %q", p)
		}
	}
	if len(parents) != 6 {
		t.Errorf("server got %d requests, want 6", len(parents))
	}
	parents = nil
	mu.Unlock()

	// Traced: each request names its span.
	rc, collector := otlptest.Start(t)
	tr, err := Start(context.Background(), collector, "test", WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	runScenarios(t, tr, src)
	spans := map[string]*tracepb.Span{} // "TRACEID-SPANID" of each request span
	for _, s := range rc.Spans() {
		if s.Name == "request" {
			spans[fmt.Sprintf("%x-%x", s.TraceId, s.SpanId)] = s
			if s.Kind != tracepb.Span_SPAN_KIND_CLIENT {
				t.Errorf("request span kind %v, want client", s.Kind)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(parents) != 6 || len(spans) != 6 {
		t.Fatalf("server got %d requests, collector %d request spans; want 6 each", len(parents), len(spans))
	}
	for _, p := range parents {
		f := strings.Split(p, "-")
		if len(f) != 4 || f[0] != "00" || f[3] != "01" {
			t.Errorf("traceparent %q, want 00-TRACEID-SPANID-01", p)
			continue
		}
		if spans[f[1]+"-"+f[2]] == nil {
			t.Errorf("traceparent %q names no request span (trace ID and span ID)", p)
		}
		delete(spans, f[1]+"-"+f[2])
	}
}

// TestUnsampledRequestContext: a request of a run the sampler leaves out still runs under the
// trace context, marked not sampled, so a server's parent-based sampler leaves it out too.
func TestUnsampledRequestContext(t *testing.T) {
	off := func(k string) (string, bool) { return "always_off", k == "OTEL_TRACES_SAMPLER" }
	tr, err := Start(context.Background(), "http://127.0.0.1:1", "test", WithLookupEnv(off))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Finish(context.Background(), nil)
	sc := &suite.Scenario{Benchmark: &suite.Benchmark{Name: "chat", Kind: "openai"}, Name: "default"}
	tr.ScenarioStarted(sc, 0, 1)
	hook := tr.CallHook(sc, load.Config{})
	ctx := hook.Before(context.Background(), subject.Request{})
	h := http.Header{}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
	if p := h.Get("traceparent"); len(p) != 55 || !strings.HasSuffix(p, "-00") {
		t.Errorf("traceparent %q, want one with the sampled flag 0", p)
	}
	hook.After(ctx, engine.Call{})
	if n := tr.spans[sc.ID()].calls.recorded.Load(); n != 0 {
		t.Errorf("%d spans recorded in an unsampled run", n)
	}
}

// hooksOf is the trace's events as the engine's hooks, as run gives them to the engine.
func hooksOf(tr *Run) engine.Hooks {
	return engine.Hooks{ScenarioStarted: tr.ScenarioStarted, CallHook: tr.CallHook, ScenarioFinished: tr.ScenarioFinished}
}
