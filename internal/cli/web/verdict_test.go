package web

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/store"
	_ "github.com/inferbench/inferbench/store/sqlite"
)

// verdictRuns are two runs whose comparison has one of everything a verdict counts: gated
// regressions, an improvement, a gated single value beyond its threshold (untested), figures
// that do not gate beyond theirs (info), a change from 0 (no relative change) and an exceeded
// budget, and a median whose 5 samples give no finite 95% interval.
func verdictRuns() (old, nw *result.Run) {
	rng := rand.New(rand.NewPCG(22, 22))
	distN := func(name string, center float64, n int) result.Metric {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = center * (1 + 0.01*rng.NormFloat64())
		}
		s, _ := stats.Summarize(xs)
		m := result.NewMetric(name)
		m.Summary, m.Samples = &s, xs
		return m
	}
	dist := func(name string, center float64) result.Metric { return distN(name, center, 40) }
	one := func(name string, v float64) result.Metric {
		m := result.NewMetric(name)
		m.Value = &v
		return m
	}
	mk := func(id string, f float64) *result.Run {
		r := &result.Run{Schema: result.Schema, ID: id, StartedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(f * float64(time.Hour)))}
		sc := func(name string, ms map[string]result.Metric) {
			r.Scenarios = append(r.Scenarios, result.Scenario{Benchmark: "m", Scenario: name, Subject: "exec", Params: map[string]any{"s": name},
				Status: result.StatusOK, StartedAt: r.StartedAt, Iterations: result.Iterations{Measured: 40}, Metrics: ms})
		}
		slow := 1.0
		if f > 1 {
			slow = 1.3
		}
		sc("slower", map[string]result.Metric{"latency_ms": dist("latency_ms", 10*slow)})
		sc("slower2", map[string]result.Metric{"latency_ms": dist("latency_ms", 20*slow)})
		sc("faster", map[string]result.Metric{"latency_ms": dist("latency_ms", 10/slow)})
		// Five samples: a median with no finite 95% interval.
		sc("few", map[string]result.Metric{"latency_ms": distN("latency_ms", 10, 5)})
		// Seed 002's unchanged mobile_inference: latency the same, the harness and peak RSS moved.
		sc("mobile_inference", map[string]result.Metric{"latency_ms": dist("latency_ms", 5), "harness_latency_ms": dist("harness_latency_ms", 1.1*slow*slow),
			"peak_rss_mb": one("peak_rss_mb", 48*slow*slow), "throughput_ips": one("throughput_ips", 100/slow/slow),
			"error_rate": one("error_rate", (f-1)*0.1)})
		r.Tally()
		return r
	}
	old, nw = mk("old", 1), mk("new", 2)
	nw.Scenarios[0].Budgets = map[string]string{"latency_ms.p95": "<= 1"}
	return old, nw
}

var verdictConfig = compare.Config{Gate: []string{"throughput_ips"}} // gated, but a single value: untested

// One comparison, every rendering: the command line's text, markdown, JSON, JUnit, the HTML report
// (compare --format html), the dashboard's compare page and /api/compare show the same counts and
// marks, taken from the one compare.Report; and none shows NaN or an infinity. Failed before: the
// HTML pages counted untested rows as regressions ("regressions 32" where the command line said 6)
// and printed "+NaN%" where the text printed "?".
func TestOneVerdictEverywhere(t *testing.T) {
	old, nw := verdictRuns()
	rep := compare.Runs(old, nw, verdictConfig)
	want := map[string]int{"regressions": 2, "improvements": 1, "budgets_exceeded": 1, "unverified": 1, "info": 2}
	got := map[string]int{"regressions": rep.Regressions, "improvements": rep.Improvements, "budgets_exceeded": rep.BudgetsExceeded, "unverified": rep.Unverified, "info": rep.Info}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("the comparison itself: %s = %d, want %d (rows %+v)", k, got[k], v, rep.Rows)
		}
	}
	failing := 0
	for i := range rep.Rows {
		if rep.Rows[i].Failed() {
			failing++
		}
	}

	render := func(format string) string {
		var b bytes.Buffer
		if err := report.Comparison(&b, rep, format); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	outputs := map[string]string{}
	for _, f := range []string{"text", "text-all", "markdown", "json", "junit"} {
		outputs[f] = render(f)
	}
	var html bytes.Buffer
	if err := report.CompareHTML(&html, old, nw, rep, report.CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	outputs["html"] = html.String()

	ctx := context.Background()
	st, err := store.Open(ctx, store.Params{URL: filepath.Join(t.TempDir(), "history.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, r := range []*result.Run{old, nw} {
		if err := st.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	srv := New(st, WithCompare(func(b, h *result.Run) *compare.Report { return compare.Runs(b, h, verdictConfig) }))
	for path, name := range map[string]string{"/compare?base=old&head=new": "dashboard", "/api/compare?base=old&head=new": "api"} {
		w := get(t, srv, path)
		if w.Code != 200 {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
		}
		outputs[name] = w.Body.String()
	}

	scripts := regexp.MustCompile(`(?s)<script[^>]*>.*?</script>`) // the chart library's code
	notFinite := regexp.MustCompile(`\bNaN\b|\bInf\b|Infinity|∞`)
	for name, out := range outputs {
		out = scripts.ReplaceAllString(out, "")
		if i := notFinite.FindStringIndex(out); i != nil {
			t.Errorf("%s shows %q: ...%s...", name, out[i[0]:i[1]], out[max(0, i[0]-80):min(len(out), i[1]+40)])
		}
	}

	// Text: the summary line.
	m := regexp.MustCompile(`FAIL: (\d+) regressions, (\d+) improvements, (\d+) budgets exceeded, (\d+) untested changes, (\d+) beyond threshold not gated`).FindStringSubmatch(outputs["text"])
	if m == nil {
		t.Fatalf("text: no FAIL summary line:\n%s", outputs["text"])
	}
	textCounts := map[string]int{"regressions": atoi(m[1]), "improvements": atoi(m[2]), "budgets_exceeded": atoi(m[3]), "unverified": atoi(m[4]), "info": atoi(m[5])}
	check(t, "text", textCounts, want)
	if n := strings.Count(outputs["text-all"], "REGRESSION"); n != failing {
		t.Errorf("text (all rows): %d rows marked REGRESSION, want %d", n, failing)
	}

	// JSON and /api/compare: the report's own counts.
	for _, name := range []string{"json", "api"} {
		var j map[string]any
		if err := json.Unmarshal([]byte(outputs[name]), &j); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c := map[string]int{}
		for k := range want {
			f, _ := j[k].(float64)
			c[k] = int(f)
		}
		check(t, name, c, want)
	}

	// Markdown: the status, the regressions listed and the ❌ marks (one a failing scenario).
	md := outputs["markdown"]
	if !strings.Contains(md, "❌ 2 regression(s), 1 budget(s) exceeded") {
		t.Errorf("markdown status: want ❌ 2 regression(s), 1 budget(s) exceeded:\n%s", md)
	}
	if n := strings.Count(regexp.MustCompile(`(?s)#### Regressions\n\n(.*?)\n\n`).FindString(md), "\n- "); n != failing {
		t.Errorf("markdown lists %d regressions, want %d", n, failing)
	}
	if strings.Contains(md, "| ❌ | 5.00") || regexp.MustCompile(`mobile_inference[^\n]*❌`).MatchString(md) {
		t.Errorf("markdown: the unchanged mobile_inference is marked ❌ (from figures that do not gate):\n%s", md)
	}

	// JUnit: failures are the failing rows and the exceeded budgets.
	var ju struct {
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal([]byte(outputs["junit"]), &ju); err != nil {
		t.Fatal(err)
	}
	if ju.Failures != want["regressions"]+want["budgets_exceeded"] {
		t.Errorf("junit: %d failures, want %d", ju.Failures, want["regressions"]+want["budgets_exceeded"])
	}

	// The HTML report and the dashboard's page: the cards and the rows marked failing.
	for _, name := range []string{"html", "dashboard"} {
		page := outputs[name]
		c := map[string]int{}
		for k := range want {
			m := regexp.MustCompile(`data-count="` + k + `"><div class="k">[^<]*</div><div class="v">(\d+)</div>`).FindStringSubmatch(page)
			if m == nil {
				t.Fatalf("%s: no %s card", name, k)
			}
			c[k] = atoi(m[1])
		}
		check(t, name, c, want)
		if n := strings.Count(page, `data-mark="fail"`); n != failing {
			t.Errorf("%s: %d rows marked failing, want %d", name, n, failing)
		}
		if !strings.Contains(page, `<div class="v">FAIL</div>`) {
			t.Errorf("%s: the verdict card does not say FAIL", name)
		}
		if !strings.Contains(page, "? <span class=\"note\">the old value is 0") {
			t.Errorf("%s: error_rate 0 → 0.1 has no \"?\" with its reason", name)
		}
	}
}

func check(t *testing.T, name string, got, want map[string]int) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %d, want %d (the comparison's)", name, k, got[k], v)
		}
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
