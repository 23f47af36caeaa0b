package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/internal/page"
	"github.com/inferbench/inferbench/internal/testkit/browsertest"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// evil is an untrusted benchmark name: it must render as text, never as markup.
const evil = `<script>alert(1)</script>`

// distMetric builds a distribution metric from samples drawn around centre.
func distMetric(name string, rng *rand.Rand, n int, centre, spread float64) result.Metric {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = centre * (1 + spread*rng.NormFloat64()*0.3 + spread*math.Abs(rng.NormFloat64())*0.2)
	}
	s, _ := stats.Summarize(xs)
	m := result.NewMetric(name)
	m.Summary, m.Samples = &s, xs
	return m
}

func valueMetric(name string, v float64) result.Metric {
	m := result.NewMetric(name)
	m.Value = &v
	return m
}

// testRun is a run with one benchmark of each kind, resource timelines, a failure, a skip and an
// untrusted name. samples sets the raw samples kept per metric.
func testRun(benchmarks, samples int) *result.Run {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 11, 22, 14, 30, 5, 0, time.UTC)
	r := &result.Run{
		Schema: result.Schema, ID: "20261122_143005", StartedAt: t0, FinishedAt: t0.Add(95 * time.Second),
		Environment: map[string]any{"os": "linux", "cpu": map[string]any{"model": "Test CPU", "cores": 8}, "git": map[string]any{"commit": "abc123", "dirty": false}, "host": `<b>host</b>`},
		Config:      result.Config{Args: []string{"run", "--enable-mock"}},
	}
	for b := 0; b < benchmarks; b++ {
		name := fmt.Sprintf("resnet%d", b)
		if b == 0 {
			name = "resnet50"
		}
		for _, variant := range []string{"eager", "compiled"} {
			for _, bs := range []int{1, 8, 32} {
				lat := 2 + 0.6*float64(bs)
				if variant == "compiled" {
					lat *= 0.7
				}
				s := result.Scenario{
					Benchmark: name, Scenario: fmt.Sprintf("batch_size=%d/variant=%s", bs, variant), Subject: "mock",
					Source: "benches/perf/resnet.yaml:3", Params: map[string]any{"batch_size": float64(bs), "variant": variant},
					Status: result.StatusOK, StartedAt: t0, Iterations: result.Iterations{Warmup: 3, Measured: samples},
					Metrics: map[string]result.Metric{
						"latency_ms":     distMetric("latency_ms", rng, samples, lat, 0.1),
						"throughput_ips": valueMetric("throughput_ips", float64(bs)*1000/lat),
						"memory_mb":      valueMetric("memory_mb", 500+10*float64(bs)),
					},
					Extra: result.Extra{Resources: &result.Resources{Timelines: []result.Timeline{
						timelineOf("rss_mb", "MB", rng, 600, 500+10*float64(bs)),
						timelineOf("cpu_percent", "%", rng, 600, 180),
						timelineOf("gpu0_util_percent", "%", rng, 600, 70),
					}}},
				}
				r.Scenarios = append(r.Scenarios, s)
			}
		}
		if b > 0 {
			continue
		}
		for _, c := range []int{1, 4, 16, 64} {
			ttft := 12 + 0.8*float64(c)
			r.Scenarios = append(r.Scenarios, result.Scenario{
				Extra:     servingExtra(c, ttft),
				Benchmark: "llm-chat", Scenario: fmt.Sprintf("concurrency=%d", c), Subject: "openai",
				Params: map[string]any{"concurrency": float64(c), "model": "tiny"}, Status: result.StatusOK, StartedAt: t0,
				Metrics: map[string]result.Metric{
					"ttft_ms":             distMetric("ttft_ms", rng, samples, ttft, 0.2),
					"itl_ms":              distMetric("itl_ms", rng, samples, 1.5+0.05*float64(c), 0.2),
					"tpot_ms":             distMetric("tpot_ms", rng, samples, 1.6+0.05*float64(c), 0.1),
					"e2e_ms":              distMetric("e2e_ms", rng, samples, ttft+200, 0.1),
					"output_tokens_per_s": valueMetric("output_tokens_per_s", 600*math.Min(float64(c), 12)),
					"requests_per_s":      valueMetric("requests_per_s", 5*math.Min(float64(c), 12)),
				},
			})
		}
		r.Scenarios = append(r.Scenarios,
			result.Scenario{Benchmark: evil, Scenario: `x="><img src=x onerror=alert(2)>`, Subject: "exec",
				Params: map[string]any{"cmd": `';alert(3);//`}, Status: result.StatusOK,
				Metrics: map[string]result.Metric{"latency_ms": distMetric("latency_ms", rng, samples, 3, 0.1)}},
			result.Scenario{Benchmark: "whisper", Scenario: "default", Subject: "worker", Status: result.StatusSkipped, SkipReason: "python module torch not found"},
			result.Scenario{Benchmark: "bert", Scenario: "default", Subject: "worker", Status: result.StatusFailed, Error: "bert/default: open worker subject: exit status 1"},
		)
	}
	r.Tally()
	return r
}

func timelineOf(name, unit string, rng *rand.Rand, n int, level float64) result.Timeline {
	t, v := make([]float64, n), make([]float64, n)
	for i := range t {
		t[i] = float64(i) * 0.1
		v[i] = level * (1 + 0.05*rng.NormFloat64())
	}
	return result.Timeline{Name: name, Unit: unit, Every: 1, T: t, V: v, Max: v}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, d)
	}
}

func TestRunHTMLGolden(t *testing.T) {
	var buf bytes.Buffer
	// The chart library is referenced, not inlined, to keep the golden file readable.
	if err := RunHTML(&buf, testRun(1, 40), HTMLOptions{AssetBase: "assets/"}); err != nil {
		t.Fatal(err)
	}
	golden(t, "run.html", buf.Bytes())
}

// TestRunHTMLInert checks that untrusted names and parameters render as text everywhere: in the
// markup, in attributes, and in the chart data the script reads.
func TestRunHTMLInert(t *testing.T) {
	var buf bytes.Buffer
	if err := RunHTML(&buf, testRun(1, 20), HTMLOptions{AssetBase: "assets/", Nav: []Link{{Label: evil, Href: "javascript:alert(4)"}}}); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	for _, bad := range []string{evil, "<img src=x", "javascript:alert", "<b>host</b>"} {
		if strings.Contains(doc, bad) {
			t.Errorf("doc contains %q unescaped", bad)
		}
	}
	if got := strings.Count(strings.ToLower(doc), "<script"); got != 3 {
		t.Errorf("doc has %d <script elements, want 3 (chart data, chart library, doc script)", got)
	}
	if !strings.Contains(doc, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the benchmark name is not shown escaped in the markup")
	}
	// The chart data is JSON that the script parses: the name must survive as text in it.
	start := strings.Index(doc, `<script type="application/json" id="ib-charts">`)
	end := strings.Index(doc[start:], "</script>")
	data := doc[start+len(`<script type="application/json" id="ib-charts">`) : start+end]
	var charts []page.Chart
	if err := json.Unmarshal([]byte(data), &charts); err != nil {
		t.Fatalf("chart data is not JSON: %v", err)
	}
	found := false
	for _, c := range charts {
		for _, s := range c.Series {
			if strings.Contains(s.Name, "<img src=x") || strings.Contains(strings.Join(c.Categories, " "), "<img src=x") {
				found = true
			}
		}
	}
	if !found {
		t.Error("the scenario name did not reach the chart data as text")
	}
}

func TestBenchmarkCharts(t *testing.T) {
	r := testRun(1, 20)
	titles := map[string][]string{}
	axes := map[string]string{}
	for _, b := range byBenchmark(r) {
		n := 0
		for _, c := range benchmarkCharts(b.scs, kindOf(b.scs), func() string { n++; return fmt.Sprint(n) }) {
			titles[b.name] = append(titles[b.name], c.Title)
			if axes[b.name] == "" {
				axes[b.name] = c.XName
			}
		}
	}
	want := map[string][]string{
		// A batch-size sweep: percentiles and throughput against batch size, memory, the
		// distribution, and the resource timelines with the GPU's first.
		"resnet50": {"latency percentiles", "throughput", "memory", "latency_ms distribution (box p25–p75, whiskers min–p99)",
			"latency_ms histogram (share of samples)", "GPU: gpu0_util_percent", "resource: cpu_percent", "resource: rss_mb"},
		// A serving sweep: token latencies and throughput against concurrency, then the time
		// slices and turns of the scenarios that have them.
		"llm-chat": {"TTFT percentiles", "ITL percentiles", "TPOT percentiles", "end-to-end latency percentiles", "throughput",
			"e2e_ms distribution (box p25–p75, whiskers min–p99)", "e2e_ms histogram (share of samples)",
			"time slices: concurrency=16", "time slices: concurrency=64", "turns: concurrency=4"},
		// One scenario: no sweep, charts over the scenario names.
		evil: {"latency percentiles", "latency_ms distribution (box p25–p75, whiskers min–p99)", "latency_ms histogram (share of samples)"},
		// Nothing measured: no chart.
	}
	if d := cmp.Diff(want, titles); d != "" {
		t.Errorf("chart titles (-want +got):\n%s", d)
	}
	if axes["resnet50"] != "batch_size" || axes["llm-chat"] != "concurrency" || axes[evil] != "scenario" {
		t.Errorf("x axes = %v, want batch_size, concurrency and scenario", axes)
	}
}

func TestRunAdvice(t *testing.T) {
	var got []string
	for _, a := range runAdvice(testRun(1, 20)) {
		if !strings.Contains(a.Scope, "/") {
			got = append(got, a.Scope+": "+a.Text)
		}
	}
	want := []string{
		"resnet50: throughput peaks at 9412 items/s with batch_size=32 (variant=eager); p95 latency there is 23.1 ms",
	}
	if len(got) < 3 {
		t.Fatalf("advice = %q, want a sweet spot per group and the serving saturation", got)
	}
	if !strings.HasPrefix(got[0], "resnet50: throughput peaks at") || !strings.Contains(got[0], "batch_size=32 (variant=eager)") {
		t.Errorf("first advice = %q, want like %q", got[0], want[0])
	}
	serving := ""
	for _, g := range got {
		if strings.HasPrefix(g, "llm-chat:") {
			serving = g
		}
	}
	if !strings.Contains(serving, "at concurrency=16") {
		t.Errorf("serving advice = %q, want saturation at concurrency=16", serving)
	}
}

// largeOut writes the 200-scenario report to a file, for the load-time measurement
// (make report-bench; docs/performance.md).
var largeOut = flag.String("large-report", "", "write the 200-scenario report here")

// TestLargeReportSize holds the bar: the report of a 200-scenario run, every scenario with 10,000
// raw samples and three 600-point resource timelines, is under 3 MB.
func TestLargeReportSize(t *testing.T) {
	r := testRun(34, 10000) // 34 benchmarks x 6 scenarios + 7 = 211 scenarios
	var buf bytes.Buffer
	if err := RunHTML(&buf, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d scenarios: report is %d bytes", len(r.Scenarios), buf.Len())
	if buf.Len() >= 3<<20 {
		t.Errorf("report of %d scenarios is %d bytes, want under 3 MiB", len(r.Scenarios), buf.Len())
	}
	if *largeOut != "" {
		if err := os.WriteFile(*largeOut, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReportInBrowser opens a report in headless Chromium: every chart must draw, and the console
// must stay free of errors (an alert from an injected name would count as one).
func TestReportInBrowser(t *testing.T) {
	browser := browsertest.Require(t, "../internal/cli/web")
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := RunHTML(&buf, testRun(1, 200), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := browser.Check(t, "report", file, browsertest.ShotsDir(t))
	for _, e := range out.Errors {
		t.Error(e)
	}
	if len(out.Pages) != 1 || out.Pages[0].Charts == 0 || out.Pages[0].Rendered != out.Pages[0].Charts {
		t.Fatalf("pages = %+v, want one page with every chart rendered", out.Pages)
	}
	// The serving charts beyond the sweep: time slices (a log axis and a right-hand one) and turns.
	drawn := map[string]bool{}
	for _, title := range out.Pages[0].Drawn {
		drawn[title] = true
	}
	for _, title := range []string{"TTFT percentiles", "time slices: concurrency=16", "time slices: concurrency=64", "turns: concurrency=4"} {
		if !drawn[title] {
			t.Errorf("chart %q was not drawn (drawn: %q)", title, out.Pages[0].Drawn)
		}
	}
}

// BenchmarkRunHTML200 renders the report of a 211-scenario run (10,000 samples per metric).
func BenchmarkRunHTML200(b *testing.B) {
	r := testRun(34, 10000)
	var buf bytes.Buffer
	b.ResetTimer()
	for b.Loop() {
		buf.Reset()
		if err := RunHTML(&buf, r, HTMLOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

// TestReportInBrowserWithMarkupParameters: parameters that hold markup characters, hostile (an
// svg with an onload) or an LLM's own tokens (<|im_start|>, </s>), are text in every chart,
// and every chart still draws (issue 42: with such a value headless Chromium drew none).
func TestReportInBrowserWithMarkupParameters(t *testing.T) {
	browser := browsertest.Require(t, "../internal/cli/web")
	r := testRun(1, 200)
	values := []string{`<svg onload=alert(1)>`, `<|im_start|>`, `</s>`, `{a|b}`}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		v := values[i%len(values)]
		if s.Params == nil {
			s.Params = map[string]any{}
		}
		s.Params["variant"] = v
		s.Scenario += "/prompt=" + v
	}
	file := filepath.Join(t.TempDir(), "report.html")
	var buf bytes.Buffer
	if err := RunHTML(&buf, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := browser.Check(t, "report", file, browsertest.ShotsDir(t))
	for _, e := range out.Errors {
		t.Error(e)
	}
	if len(out.Pages) != 1 || out.Pages[0].Charts == 0 || out.Pages[0].Rendered != out.Pages[0].Charts {
		t.Fatalf("pages = %+v, want one page with every chart rendered", out.Pages)
	}
}
