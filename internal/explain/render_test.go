package explain

import (
	"bytes"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
)

// callgrindExplanation explains explain's testdata pair: grow loops twice as long in the new run.
func callgrindExplanation(t *testing.T) []Scenario {
	t.Helper()
	old := &result.Scenario{Benchmark: "cg", Scenario: "default", Profiles: []string{"callgrind.out.old"}}
	nw := &result.Scenario{Benchmark: "cg", Scenario: "default", Profiles: []string{"callgrind.out.new"}}
	xs := Runs("testdata", "testdata", []Pair{{Old: old, New: nw, Metric: "latency_ms", DeltaPct: 19.9}}, Options{})
	if xs[0].Explanation == nil {
		t.Fatal(xs[0].Missing)
	}
	return xs
}

// The compare page shows the explanation below the verdicts, with the differential flame graph:
// grow's frame red (it grew), in the same place in both runs, main's frame holding it.
func TestCompareHTMLExplain(t *testing.T) {
	xs := callgrindExplanation(t)
	base := &result.Run{ID: "a"}
	head := &result.Run{ID: "b"}
	var buf bytes.Buffer
	if err := report.CompareHTML(&buf, base, head, &compare.Report{Regressions: 1}, report.CompareOptions{HTMLOptions: report.HTMLOptions{Explain: mustHTML(t, xs)}}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.Contains(page, `<section class="explain"`) || !strings.Contains(page, "explained 100%: <code>grow</code> +60k Ir per call (100%)") {
		t.Fatalf("page lacks the explanation's headline")
	}
	frame := regexp.MustCompile(`<g class="frame" data-name="([^"]+)" data-change="([-0-9.]+)"><title>[^<]*</title><rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="[0-9]+" fill="(#[0-9a-f]{6})"/>`)
	frames := map[string][]string{}
	for _, m := range frame.FindAllStringSubmatch(page, -1) {
		frames[m[1]] = m
	}
	g, mainF := frames["grow"], frames["main"]
	if g == nil || mainF == nil {
		t.Fatalf("frames %v: want grow and main", keys(frames))
	}
	if c, _ := strconv.ParseFloat(g[2], 64); c < 0.4 || g[6] != "#cf222e" {
		t.Errorf("grow's frame change %s color %s: want about +0.5 of its larger cost, full red", g[2], g[6])
	}
	gy, _ := strconv.ParseFloat(g[4], 64)
	my, _ := strconv.ParseFloat(mainF[4], 64)
	gx, _ := strconv.ParseFloat(g[3], 64)
	mx, _ := strconv.ParseFloat(mainF[3], 64)
	gw, _ := strconv.ParseFloat(g[5], 64)
	mw, _ := strconv.ParseFloat(mainF[5], 64)
	if gy != my+flameRow || gx < mx || gx+gw > mx+mw+0.01 {
		t.Errorf("grow at x=%v y=%v w=%v, main at x=%v y=%v w=%v: want grow in the row below main, within it", gx, gy, gw, mx, my, mw)
	}
	if !strings.Contains(page, `fill="#2166d0"`) && strings.Contains(page, "data-change=\"-") {
		t.Log("no frame shrank fully; blue frames are drawn lighter")
	}
}

func keys(m map[string][]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// Colors: growth red, shrinkage blue, no change grey.
func TestFlameColor(t *testing.T) {
	for _, tc := range []struct {
		change float64
		want   string
	}{{0.5, "#cf222e"}, {-0.5, "#2166d0"}, {0.001, "#e6e6e6"}, {0.125, "#db848a"}} {
		if got := flameColor(tc.change); got != tc.want {
			t.Errorf("flameColor(%v) = %s, want %s", tc.change, got, tc.want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := Markdown(&buf, callgrindExplanation(t)); err != nil {
		t.Fatal(err)
	}
	want := "- **cg/default**: latency_ms +19.9%; explained 100%: `grow` +60k Ir per call (100%)"
	if !strings.Contains(buf.String(), want) || !strings.Contains(buf.String(), "| `grow` | 60k Ir → 120k Ir | 60k Ir → 120k Ir | 100% | exact |") {
		t.Errorf("markdown:\n%s\nwant %s and grow's row", buf.String(), want)
	}
}

// mustHTML renders explanations as an HTML report's section.
func mustHTML(t *testing.T, xs []Scenario) template.HTML {
	t.Helper()
	h, err := HTML(xs)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// run --baseline's step summary carries the explanation below the comparison.
func TestStepSummaryExplained(t *testing.T) {
	xs := []Scenario{{Benchmark: "cg", Scenario: "default", Metric: "latency_ms", DeltaPct: 25, Missing: "the old run has no profile of cg/default: " + HowTo}}
	rep := &compare.Report{}
	path := filepath.Join(t.TempDir(), "summary.md")
	lookup := func(k string) (string, bool) { return path, k == "GITHUB_STEP_SUMMARY" }
	if err := StepSummary(lookup, rep, xs); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "not explained: the old run has no profile of cg/default") {
		t.Errorf("step summary lacks the explanation:\n%s", b)
	}
}
