package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/internal/page"
	"github.com/inferbench/inferbench/result"
)

// servingExtra is the extra sections of testRun's serving scenario at concurrency c: time slices
// at 16 and 64 (six 10 s slices, TTFT rising in the last), multi-turn figures at 4 (three turns,
// TTFT growing with the history).
func servingExtra(c int, ttft float64) result.Extra {
	other := map[string]json.RawMessage{}
	if c >= 16 {
		var sl []map[string]any
		for k := range 6 {
			t := ttft * (1 + 0.02*float64(k%3)) // drawn from no generator: testRun's samples stay as they were
			if k == 5 {
				t *= 3
			}
			sl = append(sl, map[string]any{"start_s": 10 * k, "end_s": 10 * (k + 1), "requests": 50 * c, "failed": 0, "requests_per_s": 5 * float64(c),
				"quantiles": map[string]float64{"ttft_ms.p50": t, "ttft_ms.p90": 1.5 * t, "ttft_ms.p99": 2 * t, "tpot_ms.p50": 1.6, "tpot_ms.p90": 1.9, "tpot_ms.p99": 2.4,
					"e2e_ms.p50": t + 200, "e2e_ms.p90": 1.5*t + 220, "e2e_ms.p99": 2*t + 250}})
		}
		other[result.SectionSlices], _ = json.Marshal(sl)
	}
	if c == 4 {
		var ts []map[string]any
		for turn := 1; turn <= 3; turn++ {
			t := ttft * float64(turn)
			ts = append(ts, map[string]any{"turn": turn, "requests": 40, "ttft_ms_p50": t, "ttft_ms_p99": 1.8 * t, "e2e_ms_p50": t + 200, "e2e_ms_p99": 1.8*t + 260})
		}
		other[result.SectionTurns], _ = json.Marshal(ts)
	}
	var e result.Extra
	for k, v := range other {
		if err := e.Set(k, v); err != nil {
			panic(err)
		}
	}
	return e
}

// TestPhaseCharts checks the time-slice and per-turn charts of a serving benchmark: one per
// scenario that has the section, and what they draw.
func TestPhaseCharts(t *testing.T) {
	r := testRun(1, 20)
	var scs []*result.Scenario
	for i := range r.Scenarios {
		if r.Scenarios[i].Benchmark == "llm-chat" {
			scs = append(scs, &r.Scenarios[i])
		}
	}
	n := 0
	next := func() string { n++; return fmt.Sprint(n) }
	var charts []page.Chart
	for _, chart := range []func(*result.Scenario, func() string) (page.Chart, bool){sliceChart, turnChart} {
		for _, s := range scs {
			if c, ok := chart(s, next); ok {
				charts = append(charts, c)
			}
		}
	}
	var got []string
	for _, c := range charts {
		var names []string
		for _, s := range c.Series {
			names = append(names, s.Name)
		}
		got = append(got, fmt.Sprintf("%s | x=%s y=%s log=%v y2=%s | %s", c.Title, c.XName, c.YName, c.YLog, c.Y2Name, strings.Join(names, ", ")))
	}
	want := []string{
		// Slices: each latency at p50 and p99 on a log axis, the slices' requests/s on the right.
		"time slices: concurrency=16 | x=seconds into the measured phase y=ms (log) log=true y2=requests/s | TTFT p50, TTFT p99, TPOT p50, TPOT p99, E2E p50, E2E p99, requests/s",
		"time slices: concurrency=64 | x=seconds into the measured phase y=ms (log) log=true y2=requests/s | TTFT p50, TTFT p99, TPOT p50, TPOT p99, E2E p50, E2E p99, requests/s",
		// Turns: one category a turn.
		"turns: concurrency=4 | x=turn y=ms (log) log=true y2= | TTFT p50, TTFT p99, E2E p50, E2E p99",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("charts (-want +got):\n%s", d)
	}
}

// TestPhaseChartPoints checks the points: a slice at its middle, a missing or zero figure as a
// gap (a log axis has no zero), a turn per category, and a long run thinned to maxSlicePoints.
func TestPhaseChartPoints(t *testing.T) {
	sc := func(name string, v any) *result.Scenario {
		raw, _ := json.Marshal(v)
		sc := &result.Scenario{Scenario: "s"}
		_ = sc.Extra.Set(name, json.RawMessage(raw)) // "not a list" fails: the section stays absent
		return sc
	}
	next := func() string { return "c" }
	slices := sc(result.SectionSlices, []map[string]any{
		{"start_s": 0, "end_s": 10, "requests_per_s": 7, "quantiles": map[string]float64{"ttft_ms.p50": 20, "ttft_ms.p99": 0}},
		{"start_s": 10, "end_s": 20, "requests_per_s": 9, "quantiles": map[string]float64{"ttft_ms.p50": 30, "ttft_ms.p99": 45}},
	})
	c, ok := sliceChart(slices, next)
	if !ok {
		t.Fatal("no slice chart")
	}
	b, _ := json.Marshal(c.Series)
	if want := `[{"name":"TTFT p50","data":[[5,20],[15,30]],"color":"#1f77b4"},{"name":"TTFT p99","data":[[5,null],[15,45]],"dashed":true,"color":"#1f77b4"},{"name":"requests/s","data":[[5,7],[15,9]],"y2":true,"step":true,"color":"#999999"}]`; string(b) != want {
		t.Errorf("slice series = %s\nwant %s", b, want)
	}

	turns := sc(result.SectionTurns, []map[string]any{{"turn": 1, "ttft_ms_p50": 20, "e2e_ms_p50": 220}, {"turn": 2, "ttft_ms_p50": 35, "e2e_ms_p50": 240}})
	c, ok = turnChart(turns, next)
	if !ok {
		t.Fatal("no turn chart")
	}
	b, _ = json.Marshal(c)
	if want := `{"id":"c","title":"turns: s","kind":"line","x_name":"turn","y_name":"ms (log)","categories":["1","2"],"y_log":true,"series":[{"name":"TTFT p50","data":[20,35],"color":"#1f77b4"},{"name":"E2E p50","data":[220,240],"color":"#9467bd"}]}`; string(b) != want {
		t.Errorf("turn chart = %s\nwant %s", b, want)
	}

	var long []map[string]any
	for k := range 1000 {
		long = append(long, map[string]any{"start_s": k, "end_s": k + 1, "requests_per_s": 1, "quantiles": map[string]float64{"e2e_ms.p50": 100}})
	}
	c, _ = sliceChart(sc(result.SectionSlices, long), next)
	for _, s := range c.Series {
		if n := len(s.Data.([][2]page.Num)); n > maxSlicePoints || n < maxSlicePoints/2 {
			t.Errorf("series %s has %d points of 1000 slices, want at most %d", s.Name, n, maxSlicePoints)
		}
	}

	// One slice, one turn, or an unreadable section: no chart.
	for _, s := range []*result.Scenario{
		sc(result.SectionSlices, []map[string]any{{"start_s": 0, "end_s": 10}}),
		sc(result.SectionTurns, []map[string]any{{"turn": 1, "ttft_ms_p50": 20}}),
		sc(result.SectionTurns, "not a list"),
	} {
		if _, ok := sliceChart(s, next); ok {
			t.Errorf("%+v: a slice chart, want none", s.Extra)
		}
		if _, ok := turnChart(s, next); ok {
			t.Errorf("%+v: a turn chart, want none", s.Extra)
		}
	}
}

// TestRunHTMLPhaseCharts checks the generated page: each new chart has its placeholder in its
// benchmark's section and its spec in the page's chart data.
func TestRunHTMLPhaseCharts(t *testing.T) {
	var buf bytes.Buffer
	if err := RunHTML(&buf, testRun(1, 20), HTMLOptions{AssetBase: "assets/"}); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	const open = `<script type="application/json" id="ib-charts">`
	start := strings.Index(doc, open)
	end := strings.Index(doc[start:], "</script>")
	var charts []page.Chart
	if err := json.Unmarshal([]byte(doc[start+len(open):start+end]), &charts); err != nil {
		t.Fatalf("chart data is not JSON: %v", err)
	}
	section := doc[strings.Index(doc, `<h2>llm-chat`):]
	section = section[:strings.Index(section, "</section>")]
	found := map[string]bool{}
	for _, c := range charts {
		if !strings.HasPrefix(c.Title, "time slices: ") && !strings.HasPrefix(c.Title, "turns: ") {
			continue
		}
		found[c.Title] = true
		if want := fmt.Sprintf(`data-chart="%s" aria-label="%s"`, c.ID, c.Title); !strings.Contains(section, want) {
			t.Errorf("the llm-chat section lacks %s", want)
		}
	}
	for _, title := range []string{"time slices: concurrency=16", "time slices: concurrency=64", "turns: concurrency=4"} {
		if !found[title] {
			t.Errorf("no chart %q in the doc's chart data", title)
		}
	}
}
