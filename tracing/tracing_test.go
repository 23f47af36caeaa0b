package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/suite"
)

// receiver is an OTLP/HTTP trace endpoint: it decodes each protobuf export request.
type receiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want POST /v1/traces of application/x-protobuf", http.StatusBadRequest)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			rc.spans = append(rc.spans, ss.Spans...)
		}
	}
	rc.mu.Unlock()
	b, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(b)
}

// TestOTLPRoundTrip: a run's spans reach an OTLP receiver: the run span, and below it a span per
// scenario carrying its metrics as attributes.
func TestOTLPRoundTrip(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()

	ctx := context.Background()
	tr, err := Start(ctx, srv.URL+"/v1/traces", "test")
	if err != nil {
		t.Fatal(err)
	}
	b := &suite.Benchmark{Name: "llm-mock", Kind: "mock", Model: "tiny"}
	sc := &suite.Scenario{Benchmark: b, Name: "batch_size=1"}
	tr.ScenarioStarted(sc, 0, 1)
	lat := result.NewMetric("latency_ms")
	lat.Summary = &stats.Summary{N: 20, Median: 45, P95: 48, P99: 50}
	tr.ScenarioDone(&result.Scenario{Benchmark: "llm-mock", Scenario: "batch_size=1", Status: result.StatusOK,
		Metrics: map[string]result.Metric{"latency_ms": lat}})
	if err := tr.Finish(ctx, &result.Run{ID: "r1", Summary: result.Summary{Total: 1}}); err != nil {
		t.Fatal(err)
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	byName := map[string]*tracepb.Span{}
	for _, s := range rc.spans {
		byName[s.Name] = s
	}
	run, scen := byName["inferbench run"], byName["scenario llm-mock/batch_size=1"]
	if run == nil || scen == nil {
		t.Fatalf("received spans %v, want the run and the scenario", rc.spans)
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
