package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/inferbench/inferbench/internal/capacity"
	"github.com/inferbench/inferbench/internal/page"
	"github.com/inferbench/inferbench/internal/testkit/browsertest"
	"github.com/inferbench/inferbench/result"
)

// TestCapacityChart: a capacity search's scenario gets a chart of attainment against rate with
// its steps (and their intervals), the fit, the target, and the knee marked.
func TestCapacityChart(t *testing.T) {
	res := capacity.Result{CapacityRPS: 48, LowerRPS: 45,
		Objectives: []capacity.Objective{{Name: "ttft_ms.p90", Target: 0.9}},
		Steps: []capacity.Step{
			{Rate: 40, Verdict: capacity.Pass, Estimates: []capacity.Estimate{{Attainment: 0.97, Lower: 0.93, Upper: 1.01}}},
			{Rate: 80, Verdict: capacity.Fail, Estimates: []capacity.Estimate{{Attainment: 0.3, Lower: 0.2, Upper: 0.4}}},
			{Rate: 45, Verdict: capacity.Pass, Estimates: []capacity.Estimate{{Attainment: 0.95, Lower: 0.91, Upper: 0.99}}},
		},
		Curve: [][]capacity.Point{{{Rate: 40, Attainment: 0.97}, {Rate: 45, Attainment: 0.95}, {Rate: 80, Attainment: 0.3}}},
	}
	raw, _ := json.Marshal(res)
	s := &result.Scenario{Scenario: "default", Extra: result.Extra{Other: map[string]json.RawMessage{capacity.Section: raw}}}
	n := 0
	charts := capacityCharts([]*result.Scenario{s, {Scenario: "no-search"}}, func() string { n++; return "c" })
	if len(charts) != 1 {
		t.Fatalf("%d charts, want 1", len(charts))
	}
	c := charts[0]
	if len(c.Series) != 3 || c.Series[0].Type != "scatter" || len(c.Series[0].Err) != 3 || !c.Series[2].Dashed {
		t.Errorf("series %+v: want the steps with intervals, the fit, the dashed target", c.Series)
	}
	if target := c.Series[2].Data.([][2]page.Num); target[0] != [2]page.Num{40, 0.9} || target[1] != [2]page.Num{80, 0.9} {
		t.Errorf("target line %v, want 0.9 from 40 to 80 req/s", target)
	}
	if len(c.Marks) != 2 || c.Marks[0].X != 48 || c.Marks[1].X != 45 {
		t.Errorf("marks %+v, want the capacity at 48 and the bound at 45", c.Marks)
	}
}

// TestCapacityChartInBrowser: the chart renders in a browser (scatter points with error bars,
// lines, the marks) next to a run's other charts.
func TestCapacityChartInBrowser(t *testing.T) {
	browser := browsertest.Require(t, "../internal/cli/web")
	r := testRun(1, 200)
	raw, _ := json.Marshal(capacity.Result{CapacityRPS: 48, LowerRPS: 45,
		Objectives: []capacity.Objective{{Name: "ttft_ms.p90", Target: 0.9}},
		Steps: []capacity.Step{
			{Rate: 40, Verdict: capacity.Pass, Estimates: []capacity.Estimate{{Attainment: 0.97, Lower: 0.93, Upper: 1.01}}},
			{Rate: 80, Verdict: capacity.Fail, Estimates: []capacity.Estimate{{Attainment: 0.3, Lower: 0.2, Upper: 0.4}}},
		},
		Curve: [][]capacity.Point{{{Rate: 40, Attainment: 0.97}, {Rate: 80, Attainment: 0.3}}},
	})
	var name string
	for i := range r.Scenarios {
		if _, ok := r.Scenarios[i].Metrics["ttft_ms"]; ok {
			s := &r.Scenarios[i]
			if s.Extra.Other == nil {
				s.Extra.Other = map[string]json.RawMessage{}
			}
			s.Extra.Other[capacity.Section] = raw
			name = s.Scenario
			break
		}
	}
	if name == "" {
		t.Fatal("the test run has no serving scenario")
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
	if len(out.Pages) != 1 || out.Pages[0].Rendered != out.Pages[0].Charts || !slices.Contains(out.Pages[0].Drawn, "capacity: attainment against rate: "+name) {
		t.Errorf("pages %+v: want every chart rendered, the capacity chart among them", out.Pages)
	}
}
