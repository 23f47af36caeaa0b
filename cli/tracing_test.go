package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestRunExportsOTLP: run --otlp-endpoint sends the run and its scenarios as spans to an OTLP
// receiver started by the test (protobuf over HTTP, decoded here).
func TestRunExportsOTLP(t *testing.T) {
	var mu sync.Mutex
	var names []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
		mu.Unlock()
	}))
	defer srv.Close()
	code, out, errOut := runCLI(t, "", nil, "run", filepath.Join(testdata, "project"), "--enable-mock",
		"--output-dir", t.TempDir(), "--otlp-endpoint", srv.URL+"/v1/traces")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	sort.Strings(names)
	want := []string{"inferbench run", "scenario gated/default", "scenario noop/default", "scenario quick-mock/batch_size=1", "scenario quick-mock/batch_size=2"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("spans received (-want +got):\n%s", diff)
	}
}
