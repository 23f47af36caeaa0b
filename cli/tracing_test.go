package cli

import (
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestRunExportsOTLP: run --otlp-endpoint sends the run, its scenarios and their iterations as
// spans to an OTLP receiver started by the test (protobuf over HTTP, decoded here);
// --otlp-span-rate 0 leaves out the iterations.
func TestRunExportsOTLP(t *testing.T) {
	for _, tc := range []struct {
		rate string
		want []string
	}{
		{"1000", []string{"inferbench run", "iteration", "scenario gated/default", "scenario noop/default", "scenario quick-mock/batch_size=1", "scenario quick-mock/batch_size=2"}},
		{"0", []string{"inferbench run", "scenario gated/default", "scenario noop/default", "scenario quick-mock/batch_size=1", "scenario quick-mock/batch_size=2"}},
	} {
		var mu sync.Mutex
		names := map[string]bool{}
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
						names[s.Name] = true
					}
				}
			}
			mu.Unlock()
		}))
		code, out, errOut := runCLI(t, "", nil, "run", filepath.Join(testdata, "project"), "--enable-mock",
			"--output-dir", t.TempDir(), "--otlp-endpoint", srv.URL+"/v1/traces", "--otlp-span-rate", tc.rate)
		srv.Close()
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		got := slices.Sorted(maps.Keys(names))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("--otlp-span-rate %s: spans received (-want +got):\n%s", tc.rate, diff)
		}
	}
}

// TestRunTraceUsageErrors: a sampler the run cannot honour, or a negative span rate, is a usage
// error (exit 2) naming the variable or flag, before anything runs.
func TestRunTraceUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{"OTEL_TRACES_SAMPLER=jaeger_remote"}, nil, "OTEL_TRACES_SAMPLER"},                                   // not supported
		{[]string{"OTEL_TRACES_SAMPLER=traceidratio", "OTEL_TRACES_SAMPLER_ARG=1.5"}, nil, "OTEL_TRACES_SAMPLER_ARG"}, // out of range
		{nil, []string{"--otlp-span-rate", "-1"}, "--otlp-span-rate"},                                                 // negative
	} {
		args := append([]string{"run", filepath.Join(testdata, "project"), "--enable-mock", "--output-dir", t.TempDir(),
			"--otlp-endpoint", "http://127.0.0.1:1/v1/traces"}, tc.args...)
		code, out, errOut := runCLI(t, "", tc.env, args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want 2 and a message naming %s\n%s", tc.env, tc.args, code, errOut, tc.want, out)
		}
	}
}
