package explain

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/testkit/browsertest"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
)

// The differential flame graph in Chromium: every frame wide enough to draw is drawn with a size,
// and every label stays inside its frame as the browser's fonts draw it, wide letters (a C++
// operator's capitals, m and w) and narrow frames included. The callgrind pair of explain's
// testdata, and a made-up tree of wide names.
func TestFlameBrowser(t *testing.T) {
	browser := browsertest.Require(t, "../cli/web")
	xs := callgrindExplanation(t)
	wide := strings.Repeat("W", 60)
	tree := &Node{Name: "all", Old: 10, New: 12, Children: []*Node{
		{Name: "main.(*Model).Forward", Old: 6, New: 8, Children: []*Node{
			{Name: "aten::MKLDNN_CONVOLUTION_BACKWARD_WEIGHTS [64×3×7×7]", Old: 3, New: 4.5},
			{Name: wide, Old: 2, New: 2.4},
			{Name: "mmmmmmmmmmmmmmmmmmmmwwwwwwwwwwwwwwwwwwww", Old: 0.4, New: 0.4},
			{Name: "MMMMMMMM", Old: 0.1, New: 0.1},
		}},
		{Name: "runtime.mallocgc", Old: 4, New: 4},
	}}
	xs = append(xs, Scenario{Benchmark: "wide", Scenario: "names", Metric: "latency_ms", DeltaPct: 20,
		Explanation: &Explanation{Source: SourceGo, Unit: "ms", OldTotal: 10, NewTotal: 12, Flame: tree}})
	var buf bytes.Buffer
	if err := report.CompareHTML(&buf, &result.Run{ID: "a"}, &result.Run{ID: "b"}, &compare.Report{Regressions: 2}, report.CompareOptions{HTMLOptions: report.HTMLOptions{Explain: mustHTML(t, xs)}}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "compare.html")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := browser.Check(t, "flame", file, browsertest.ShotsDir(t))
	for _, e := range out.Errors {
		t.Error(e)
	}
	if len(out.Pages) != 2 {
		t.Fatalf("pages %+v: want the two flame graphs", out.Pages)
	}
	for i, p := range out.Pages {
		if p.Rendered != p.Charts || p.Charts == 0 {
			t.Errorf("flame graph %d: %d of %d frames drawn with a size", i+1, p.Rendered, p.Charts)
		}
	}
	if !slices.Contains(out.Pages[0].Drawn, "grow") || !slices.Contains(out.Pages[1].Drawn, wide) {
		t.Errorf("drawn %v and %v: want grow in the first graph, the wide name in the second", out.Pages[0].Drawn, out.Pages[1].Drawn)
	}
}
