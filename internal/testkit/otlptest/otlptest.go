// Package otlptest is an OTLP/HTTP trace receiver for tests: an http.Handler that decodes each
// protobuf export request (POST /v1/traces of application/x-protobuf) and keeps its spans, for
// the tests of the code that exports a run's spans (packages tracing, run and cli).
package otlptest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver is an OTLP/HTTP trace endpoint, safe for concurrent use. It answers an export
// request, a POST to /v1/traces of application/x-protobuf that decodes as an
// ExportTraceServiceRequest, with an ExportTraceServiceResponse and keeps its spans; any other
// request gets 400 Bad Request. Every request, good or bad, is recorded in Requests.
type Receiver struct {
	mu       sync.Mutex
	requests []string
	spans    []*tracepb.Span
}

// Start starts an HTTP server for a new Receiver, closed by t.Cleanup, and returns the receiver
// and the server's URL (no path: exporters are given URL+"/v1/traces" or the bare URL).
func Start(t testing.TB) (*Receiver, string) {
	t.Helper()
	rc := &Receiver{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv.URL
}

// ServeHTTP decodes an export request and keeps its spans, or answers 400.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.requests = append(rc.requests, r.Method+" "+r.URL.Path)
	rc.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want POST /v1/traces of application/x-protobuf", http.StatusBadRequest)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
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

// Requests returns the requests received so far, in order, each as "METHOD PATH"
// ("POST /v1/traces"), the rejected ones included.
func (rc *Receiver) Requests() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.requests)
}

// Spans returns a copy of the list of spans received so far, in the order they came.
func (rc *Receiver) Spans() []*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.spans)
}

// Names returns the names of the spans received so far, sorted, each once.
func (rc *Receiver) Names() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	names := make([]string, 0, len(rc.spans))
	for _, s := range rc.spans {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}
