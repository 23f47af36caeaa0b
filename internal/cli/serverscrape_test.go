package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/result"
)

// TestServerMetricsReachResults runs serving scenarios against the mock OpenAI server, beside
// which a fake Prometheus /metrics serves vLLM's metrics (monitor/scrape's fixture), and follows
// the server's gauges to run.json's timelines and the HTML report: by default inferbench scrapes
// the server's root /metrics; `metrics_url: none` scrapes nothing; an explicit metrics_url that
// does not answer is named in a warning, and the scenario still runs.
func TestServerMetricsReachResults(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("..", "monitor", "scrape", "testdata", "vllm_metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var scrapes atomic.Int64
	mock := mockserver.New(mockserver.Config{TTFT: workload.Fixed(5), ITL: workload.Fixed(2), OutputTokens: workload.Fixed(8), Seed: 1})
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		scrapes.Add(1)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write(fixture)
	})
	mux.Handle("/", mock.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	// A port that answers nothing: a listener closed at once.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/metrics"
	dead.Close()

	dir := t.TempDir()
	benches := filepath.Join(dir, "benches")
	if err := os.MkdirAll(benches, 0o755); err != nil {
		t.Fatal(err)
	}
	def := func(name, metricsURL string) {
		t.Helper()
		y := "name: " + name + "\nsubject:\n  kind: openai\n  url: " + srv.URL + "/v1\n  model: mock\n"
		if metricsURL != "" {
			y += "  metrics_url: " + metricsURL + "\n"
		}
		y += "  workload: {input_tokens: 16, output_tokens: 8}\nload: {mode: concurrency, concurrency: 2, warmup_iterations: 2, measurement_iterations: 60}\n"
		if err := os.WriteFile(filepath.Join(benches, name+".yaml"), []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	def("default-url", "")
	def("no-metrics", "none")
	def("dead-url", deadURL)

	out := filepath.Join(dir, "results")
	code, stdout, stderr := runCLI(t, dir, nil, "run", benches, "--output-dir", out)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	runDir := filepath.Join(out, result.LatestLink)
	r, err := result.Load(filepath.Join(runDir, result.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	gauges := []string{"server_running_requests", "server_waiting_requests", "server_kv_cache_pct"}
	byName := map[string]result.Scenario{}
	for _, sc := range r.Scenarios {
		byName[sc.Benchmark] = sc
		if sc.Status != result.StatusOK {
			t.Errorf("%s: status %s: %s", sc.Benchmark, sc.Status, sc.Error)
		}
	}
	timelines := func(sc result.Scenario) map[string]result.Timeline {
		out := map[string]result.Timeline{}
		if sc.Extra.Resources != nil {
			for _, tl := range sc.Extra.Resources.Timelines {
				if strings.HasPrefix(tl.Name, "server_") {
					out[tl.Name] = tl
				}
			}
		}
		return out
	}

	// Default: <base>/metrics, where the fixture says 12 + 9 running, 3 + 0 waiting, KV cache
	// (50% + 25%) / 2.
	tls := timelines(byName["default-url"])
	want := map[string]float64{"server_running_requests": 21, "server_waiting_requests": 3, "server_kv_cache_pct": 37.5}
	for _, g := range gauges {
		tl, ok := tls[g]
		if !ok {
			t.Errorf("default-url: no %s timeline (server timelines %v)", g, tls)
			continue
		}
		if len(tl.V) == 0 || tl.V[0] != want[g] {
			t.Errorf("default-url: %s = %v, want %v throughout", g, tl.V, want[g])
		}
	}
	if scrapes.Load() == 0 {
		t.Error("the default /metrics was never scraped")
	}
	if w := strings.Join(byName["default-url"].Warnings, "\n"); strings.Contains(w, "server metrics") {
		t.Errorf("default-url: warnings %q", w)
	}

	// none: no scrape, no timeline, no warning.
	if tls := timelines(byName["no-metrics"]); len(tls) != 0 {
		t.Errorf("no-metrics: server timelines %v, want none", tls)
	}
	if w := strings.Join(byName["no-metrics"].Warnings, "\n"); strings.Contains(w, "server metrics") {
		t.Errorf("no-metrics: warnings %q", w)
	}

	// An explicit URL that does not answer: a warning naming it, no timeline, the scenario ran.
	dsc := byName["dead-url"]
	if tls := timelines(dsc); len(tls) != 0 {
		t.Errorf("dead-url: server timelines %v, want none", tls)
	}
	if w := strings.Join(dsc.Warnings, "\n"); !strings.Contains(w, "server metrics not scraped") || !strings.Contains(w, deadURL) {
		t.Errorf("dead-url: warnings %q lack the one naming %s", w, deadURL)
	}
	if dsc.Iterations.Measured != 60 {
		t.Errorf("dead-url: measured %d, want 60", dsc.Iterations.Measured)
	}

	html, err := os.ReadFile(filepath.Join(runDir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gauges {
		if !strings.Contains(string(html), g) {
			t.Errorf("report.html lacks %s", g)
		}
	}
}
