package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestRunExportsOTLPFromEnvironment: with no --otlp-endpoint, the standard
// OTEL_EXPORTER_OTLP_ENDPOINT alone makes run export its spans (to the endpoint's /v1/traces,
// as the OpenTelemetry specification says for the base endpoint), to an OTLP receiver started
// by the test. It drives only the command line, whichever package sets tracing up.
func TestRunExportsOTLPFromEnvironment(t *testing.T) {
	var mu sync.Mutex
	paths := map[string]int{}
	spans := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		paths[r.Method+" "+r.URL.Path]++
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans[s.Name] = true
				}
			}
		}
	}))
	defer srv.Close()
	code, out, errOut := runCLI(t, "", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + srv.URL},
		"run", filepath.Join(testdata, "project"), "--enable-mock", "--output-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if paths["POST /v1/traces"] == 0 || len(paths) != 1 {
		t.Errorf("requests received %v, want POST /v1/traces only", paths)
	}
	for _, want := range []string{"inferbench run", "scenario quick-mock/batch_size=1"} {
		if !spans[want] {
			t.Errorf("no span %q among %v", want, spans)
		}
	}
}
