package history

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/store"
)

// TestSeriesOf groups points by scenario and finds the shift in the one that has one.
func TestSeriesOf(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var pts []store.Point
	for i := range 20 {
		v := 10.0
		if i >= 10 {
			v = 13
		}
		at := t0.Add(time.Duration(i) * time.Hour)
		pts = append(pts,
			store.Point{Benchmark: "b", Scenario: "shifts", RunID: "r" + string(rune('a'+i)), Time: at, Value: v + 0.01*float64(i%3)},
			store.Point{Benchmark: "b", Scenario: "flat", RunID: "r" + string(rune('a'+i)), Time: at, Value: 5 + 0.01*float64(i%3)})
	}
	series := SeriesOf(pts, "latency_ms.p50", stats.ChangeOptions{MaxP: 0.001})
	if len(series) != 2 || series[0].Scenario != "shifts" || len(series[0].Points) != 20 {
		t.Fatalf("series %+v", series)
	}
	if cps := series[0].ChangePoints; len(cps) != 1 || cps[0].Index != 10 || cps[0].RunID != "rk" || cps[0].Magnitude < 0.25 {
		t.Errorf("change points of the shifting series: %+v", cps)
	}
	if cps := series[1].ChangePoints; len(cps) != 0 {
		t.Errorf("change points of the flat series: %+v", cps)
	}
	var buf bytes.Buffer
	WriteText(&buf, series[0], false)
	if out := buf.String(); !strings.Contains(out, "10 earlier points") || !strings.Contains(out, "change point at run rk") {
		t.Errorf("text:\n%s", out)
	}
}
