package sample

import (
	"math"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/monitor"
	"github.com/inferbench/inferbench/result"
)

// window is a monitor's report of one block: cpu_pct at each sample, and its totals.
func window(t0 time.Time, d time.Duration, cpuPct []float64, cpuS, peak float64) *result.Resources {
	rec := monitor.NewRecorder([]monitor.Metric{
		{Name: "cpu_pct", Unit: "%", Kind: monitor.Gauge},
		{Name: "cpu_s", Unit: "s", Kind: monitor.Total},
		{Name: "peak_rss_mb", Unit: "MB", Kind: monitor.Total},
	}, 64)
	rec.Begin(t0)
	for i, v := range cpuPct {
		rec.Add(t0.Add(time.Duration(i)*d/time.Duration(len(cpuPct))), []monitor.Value{{Name: "cpu_pct", V: v}})
	}
	rec.Add(t0.Add(d), []monitor.Value{{Name: "cpu_s", V: cpuS}, {Name: "peak_rss_mb", V: peak}})
	rec.End(t0.Add(d))
	return rec.Report()
}

// A side's blocks joined: its window is the blocks end to end (not the time between them, when
// the other side ran), its CPU time their sum, its peak the largest, its CPU percent over every
// sample, its timeline on its own time.
func TestJoinSideBlocks(t *testing.T) {
	t0 := time.Unix(100, 0)
	rep := join([]*result.Resources{
		window(t0, time.Second, []float64{100, 100}, 1, 20),
		window(t0.Add(5*time.Second), time.Second, []float64{10, 10, 10, 10}, 0.1, 30),
	})
	if d := rep.Duration(); d != 2*time.Second {
		t.Errorf("window %v, want the two blocks' 2s", d)
	}
	for name, want := range map[string]float64{"cpu_s": 1.1, "peak_rss_mb": 30} {
		if a, _ := rep.Get(name); math.Abs(a.Value-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, a.Value, want)
		}
	}
	if a, _ := rep.Get("cpu_pct"); a.N != 6 || math.Abs(a.Mean-40) > 1e-9 || a.Max != 100 || a.Min != 10 {
		t.Errorf("cpu_pct %+v, want the mean of 6 samples, 40", a)
	}
	tl, _ := rep.Timeline("cpu_pct")
	if len(tl.T) != 6 || tl.T[2] != 1 || tl.T[5] != 1.75 {
		t.Errorf("cpu_pct timeline at %v, want the second block's points from 1 s on", tl.T)
	}
}
