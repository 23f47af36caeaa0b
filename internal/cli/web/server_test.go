package web

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/inferbench/inferbench/internal/testkit/browsertest"
	"github.com/inferbench/inferbench/internal/testkit/storetest"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/store"
	_ "github.com/inferbench/inferbench/store/sqlite"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const evil = `<script>alert(1)</script>`

// serving adds a serving benchmark to r: TTFT and ITL distributions over concurrency.
func serving(r *result.Run, center float64) {
	for _, c := range []int{1, 4, 16} {
		dist := func(name string, v float64) result.Metric {
			xs := make([]float64, 50)
			for i := range xs {
				xs[i] = v * (1 + 0.01*float64(i%7))
			}
			s, _ := stats.Summarize(xs)
			m := result.NewMetric(name)
			m.Summary, m.Samples = &s, xs
			return m
		}
		tok := 500 * float64(min(c, 8))
		r.Scenarios = append(r.Scenarios, result.Scenario{
			Benchmark: "llm", Scenario: fmt.Sprintf("concurrency=%d", c), Subject: "openai",
			Params: map[string]any{"concurrency": float64(c)}, Status: result.StatusOK, StartedAt: r.StartedAt,
			Iterations: result.Iterations{Measured: 50},
			Metrics: map[string]result.Metric{
				"ttft_ms": dist("ttft_ms", center+float64(c)), "itl_ms": dist("itl_ms", 2), "e2e_ms": dist("e2e_ms", 100*center),
				"output_tokens_per_s": {Unit: "tokens/s", Better: "higher", Value: &tok},
			},
		})
	}
}

// newTestServer returns a server over a SQLite store holding 12 runs (latency shifts up by 30%
// from the 7th), the newest with a serving benchmark and an untrusted name, and a baseline.
func newTestServer(t *testing.T, opts ...Option) (*Server, store.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Params{URL: filepath.Join(t.TempDir(), "history.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for i := 0; i < 12; i++ {
		center := 10.0
		switch {
		case i == 11:
			center = 16 // the newest run regresses against the one before
		case i >= 6:
			center = 13 // a shift the trend marks
		}
		r := storetest.MakeRun(fmt.Sprintf("run%02d", i+1), storetest.T0.Add(time.Duration(i)*time.Hour), uint64(i+1), center, []string{"resnet"}, 3, 40)
		serving(r, center)
		if i == 11 {
			lat := r.Scenarios[0].Metrics["latency_ms"]
			r.Scenarios = append(r.Scenarios, result.Scenario{Benchmark: evil, Scenario: `"><img src=x onerror=alert(2)>`, Status: result.StatusOK,
				Params: map[string]any{"x": `';alert(3)//`}, Metrics: map[string]result.Metric{"latency_ms": lat}, Iterations: result.Iterations{Measured: 40}})
		}
		r.Tally()
		if err := st.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetBaseline(ctx, store.Baseline{Name: "main", RunID: "run06", CreatedAt: storetest.T0.Add(6 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	return New(st, opts...), st
}

func get(t *testing.T, h http.Handler, path string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.Host = "127.0.0.1:8080" // as a browser on this machine sends it
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, d)
	}
}

func TestHandlersGolden(t *testing.T) {
	srv, _ := newTestServer(t)
	for _, c := range []struct{ path, golden string }{
		{"/", "runs.html"},                       // the run list
		{"/baselines", "baselines.html"},         // named baselines
		{"/api/runs", "api_runs.json"},           // run headers, newest first
		{"/api/baselines", "api_baselines.json"}, // baselines
		{"/api/history?benchmark=resnet&scenario=batch_size%3D1&metric=latency_ms.p50", "api_history.json"},
		{"/trends?benchmark=resnet&metric=latency_ms.p50", "trends.html"}, // trend with the change point marked
	} {
		w := get(t, srv, c.path)
		if w.Code != http.StatusOK {
			t.Errorf("GET %s: %d %s", c.path, w.Code, w.Body)
			continue
		}
		golden(t, c.golden, w.Body.Bytes())
	}
}

func TestHandlers(t *testing.T) {
	srv, _ := newTestServer(t)
	for _, c := range []struct {
		path string
		code int
		want string // in the body
	}{
		{"/runs/run12", 200, "Run run12"},
		{"/runs/latest", 200, "Run run12"},
		{"/runs/nope", 404, "not found"},
		{"/compare?base=run01&head=run12", 200, "Compare run01 → run12"},
		{"/compare", 200, "Compare run11 → run12"},                        // head latest, base the run before
		{"/compare?base=baseline:main&head=latest", 200, "run06 → run12"}, // a named baseline
		{"/compare?base=run01&head=run12&x=1", 200, "regression"},
		{"/api/compare?base=run01&head=run12", 200, `"regressions"`},
		{"/api/runs/run03", 200, `"id": "run03"`},
		{"/api/history", 400, "metric: required"},
		{"/api/history?metric=latency_ms.p42", 400, "unknown statistic"},
		{"/live", 200, "Live"},
		{"/api/live", 200, `"running": false`},
		{"/assets/echarts.min.js", 200, "Apache"},
		{"/nope", 404, ""},
	} {
		w := get(t, srv, c.path)
		if w.Code != c.code || !strings.Contains(w.Body.String(), c.want) {
			t.Errorf("GET %s: %d, body %.200q; want %d with %q", c.path, w.Code, w.Body.String(), c.code, c.want)
		}
	}
	// The trend page marks the shift at run07.
	w := get(t, srv, "/trends?benchmark=resnet&metric=latency_ms.p50")
	if !strings.Contains(w.Body.String(), "<td>run07</td>") {
		t.Error("trends: the change point at run07 is not listed")
	}
}

// TestInert checks that untrusted names never reach a page as markup.
func TestInert(t *testing.T) {
	srv, _ := newTestServer(t)
	for _, path := range []string{"/", "/runs/run12", "/compare?base=run11&head=run12", "/trends?benchmark=" + strings.ReplaceAll(evil, "<", "%3C")} {
		body := get(t, srv, path).Body.String()
		for _, bad := range []string{evil, "<img src=x", "';alert(3)"} {
			if strings.Contains(body, bad) {
				t.Errorf("GET %s: %q appears unescaped", path, bad)
			}
		}
	}
}

func TestToken(t *testing.T) {
	srv, _ := newTestServer(t, WithToken("s3cret"))
	for _, c := range []struct {
		name   string
		path   string
		header []string
		code   int
	}{
		{"no token", "/api/runs", nil, 401},
		{"wrong token", "/api/runs", []string{"Authorization", "Bearer nope"}, 401},
		{"bearer", "/api/runs", []string{"Authorization", "Bearer s3cret"}, 200},
		{"metrics need it too", "/metrics", nil, 401},
		{"query token sets a cookie", "/?token=s3cret", nil, 303},
		{"cookie", "/", []string{"Cookie", tokenCookie + "=s3cret"}, 200},
		{"wrong query token", "/?token=x", nil, 401},
	} {
		w := get(t, srv, c.path, c.header...)
		if w.Code != c.code {
			t.Errorf("%s: GET %s = %d, want %d", c.name, c.path, w.Code, c.code)
		}
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:8080": true, "[::1]:80": true, "127.0.0.2:1": true,
		":8080": false, "0.0.0.0:8080": false, "10.0.0.1:8080": false, "example.com:80": false,
	} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestMetricsParse checks /metrics with the Prometheus client library's own parser, and that the
// histograms count every measured call.
func TestMetricsParse(t *testing.T) {
	srv, _ := newTestServer(t)
	w := get(t, srv, "/metrics")
	if w.Code != 200 {
		t.Fatalf("GET /metrics: %d %s", w.Code, w.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(w.Body.String()))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, w.Body)
	}
	want := map[string]dto.MetricType{
		metricDuration: dto.MetricType_HISTOGRAM, metricInferences: dto.MetricType_COUNTER, metricMemory: dto.MetricType_GAUGE,
		metricTTFT: dto.MetricType_HISTOGRAM, metricITL: dto.MetricType_HISTOGRAM, metricScenarios: dto.MetricType_GAUGE,
	}
	for name, typ := range want {
		f, ok := fams[name]
		if !ok {
			t.Errorf("/metrics lacks %s", name)
			continue
		}
		if f.GetType() != typ {
			t.Errorf("%s is a %v, want %v", name, f.GetType(), typ)
		}
	}
	found := false
	for _, m := range fams[metricDuration].GetMetric() {
		lv := map[string]string{}
		for _, l := range m.GetLabel() {
			lv[l.GetName()] = l.GetValue()
		}
		if lv["benchmark"] == "resnet" && lv["scenario"] == "batch_size=1" {
			found = true
			if got := m.GetHistogram().GetSampleCount(); got != 40 {
				t.Errorf("resnet/batch_size=1 duration count = %d, want 40", got)
			}
			if s := m.GetHistogram().GetSampleSum(); s < 40*0.014 || s > 40*0.018 {
				t.Errorf("resnet/batch_size=1 duration sum = %g s, want about 40 x 16 ms", s)
			}
		}
		if lv["benchmark"] == evil {
			found = found && true
		}
	}
	if !found {
		t.Error("no duration histogram for resnet/batch_size=1")
	}
}

// TestLiveEvents follows the event stream while a scenario finishes.
func TestLiveEvents(t *testing.T) {
	srv := New(nil)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/api/live/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := make(chan LiveState)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var s LiveState
				json.Unmarshal([]byte(d), &s)
				events <- s
			}
		}
		close(events)
	}()
	next := func() LiveState {
		select {
		case s, ok := <-events:
			if !ok {
				t.Fatal("stream ended")
			}
			return s
		case <-ctx.Done():
			t.Fatal("no event")
		}
		return LiveState{}
	}
	if s := next(); s.Running {
		t.Errorf("first state = %+v, want idle", s)
	}
	srv.Hub().Reset("r1", time.Now(), 2)
	srv.Hub().SetCurrent("b/s1")
	if s := next(); !s.Running || s.RunID != "r1" {
		t.Errorf("after start: %+v", s)
	}
	if s := next(); s.Current != "b/s1" {
		t.Errorf("current = %q, want b/s1", s.Current)
	}
	p50 := 4.0
	srv.Hub().Add(&result.Scenario{Benchmark: "b", Scenario: "s1", Status: result.StatusOK,
		Metrics: map[string]result.Metric{"latency_ms": {Summary: &stats.Summary{N: 1, Median: p50, P95: p50}}}})
	s := next()
	if s.Done != 1 || s.OK != 1 || len(s.Scenarios) != 1 || *s.Scenarios[0].P50 != 4 || s.Current != "" {
		t.Errorf("after done: %+v", s)
	}
	// The metrics of a live run follow the scenarios too.
	srv.Metrics().Add(&result.Scenario{Benchmark: "b", Scenario: "s1", Status: result.StatusOK, Iterations: result.Iterations{Measured: 3},
		Metrics: map[string]result.Metric{"latency_ms": {Summary: &stats.Summary{N: 3}, Samples: []float64{1, 2, 3}}}})
	body := get(t, srv, "/metrics").Body.String()
	if !strings.Contains(body, `inferbench_inference_duration_seconds_count{benchmark="b",scenario="s1"} 3`) {
		t.Errorf("live metrics lack the scenario:\n%s", body)
	}
	io.Copy(io.Discard, strings.NewReader(""))
}

// TestDashboardInBrowser walks the dashboard in headless Chromium: the run list, a click to a run,
// back and a click to a compare, the trends and the live view; every chart must draw and the
// console must stay clean.
func TestDashboardInBrowser(t *testing.T) {
	browser := browsertest.Require(t, ".")
	srv, st := newTestServer(t, WithToken("tok"))
	prev, err := st.Get(context.Background(), "run12")
	if err != nil {
		t.Fatal(err)
	}
	srv.Hub().Reset("run13", storetest.T0.Add(13*time.Hour), 12)
	for i := range 3 {
		srv.Hub().Add(&prev.Scenarios[i])
	}
	// More than six scenarios with names as long as the demo's: the live chart's x labels
	// rotate, and check.mjs fails when any text of the chart covers another or leaves it.
	// Failed before: the whole names squeezed the plot to 50 px, its tick labels on each other,
	// and the labels ran down to the legend.
	for i := range 6 {
		sc := prev.Scenarios[i%3]
		sc.Benchmark, sc.Scenario = "python_functions.EchoModelBenchmark", fmt.Sprintf("variant=kernelized,batch_size=%d", i)
		srv.Hub().Add(&sc)
	}
	srv.Hub().SetCurrent("llm/concurrency=1")
	ts := httptest.NewServer(srv)
	defer ts.Close()
	out := browser.Check(t, "dashboard", ts.URL, browsertest.ShotsDir(t), "tok")
	for _, e := range out.Errors {
		t.Error(e)
	}
	names := []string{}
	for _, p := range out.Pages {
		names = append(names, p.Name)
		if p.Rendered != p.Charts {
			t.Errorf("%s: %d of %d charts rendered", p.Name, p.Rendered, p.Charts)
		}
		if (p.Name == "run" || p.Name == "compare" || p.Name == "trends") && p.Charts == 0 {
			t.Errorf("%s: no chart", p.Name)
		}
	}
	if d := cmp.Diff([]string{"runs", "run", "compare", "trends", "live"}, names); d != "" {
		t.Errorf("pages visited (-want +got):\n%s", d)
	}
}

// TestCertificatesBadge: the runs list shows each run's serving certificates by their worst
// verdict, with how many scenarios have it, and nothing for a run without serving scenarios.
func TestCertificatesBadge(t *testing.T) {
	for _, tc := range []struct {
		counts result.CertCounts
		want   string
	}{
		{result.CertCounts{}, ""},
		{result.CertCounts{Pass: 3}, `class="badge ok"`},
		{result.CertCounts{Pass: 3}, ">pass<"},
		{result.CertCounts{Pass: 3, Warn: 1}, ">warn 1 of 4<"},
		{result.CertCounts{Pass: 1, Warn: 1, Fail: 2}, `class="badge bad"`},
		{result.CertCounts{Pass: 1, Warn: 1, Fail: 2}, ">fail 2 of 4<"},
	} {
		got := string(certificatesBadge(tc.counts))
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("certificatesBadge(%v) = %q, want it to hold %q", tc.counts, got, tc.want)
		}
	}
}
