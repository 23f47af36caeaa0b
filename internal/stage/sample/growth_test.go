package sample

import (
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/monitor"
	"github.com/inferbench/inferbench/result"
)

// Three RSS samples give no growth figure: the metric is absent, not a fit through noise.
// Failed before: rss_growth_mb was set from any fit (6.6e-31 MB from three samples).
func TestNoGrowthFromThreeSamples(t *testing.T) {
	rec := monitor.NewRecorder([]monitor.Metric{{Name: "rss_mb", Unit: "MB", Kind: monitor.Gauge}}, 64)
	t0 := time.Unix(0, 0)
	rec.Begin(t0)
	for i, v := range []float64{100, 100.0000001, 100} {
		rec.Add(t0.Add(time.Duration(i)*100*time.Millisecond), []monitor.Value{{Name: "rss_mb", V: v}})
	}
	rec.End(t0.Add(300 * time.Millisecond))
	r := &result.Scenario{Iterations: result.Iterations{Measured: 3}, Metrics: map[string]result.Metric{}}
	Attach(r, rec.Report(), true, result.Grid{}, monitor.DefaultGrowthThreshold)
	if m, ok := r.Metrics["rss_growth_mb"]; ok {
		t.Errorf("rss_growth_mb = %+v from three samples, want absent", m)
	}
	if _, ok := r.Metrics["rss_mean_mb"]; !ok {
		t.Error("rss_mean_mb absent: the samples themselves should still be reported")
	}
}

// A flat RSS line has no growth: exactly 0, not the fit's rounding. Failed before:
// rss_growth_mb was ±1e-30 MB, and compare showed "6.6e-31 → -179%".
func TestFlatRSSHasZeroGrowth(t *testing.T) {
	rec := monitor.NewRecorder([]monitor.Metric{{Name: "rss_mb", Unit: "MB", Kind: monitor.Gauge}}, 64)
	t0 := time.Unix(0, 0)
	rec.Begin(t0)
	for i := 0; i < 12; i++ {
		rec.Add(t0.Add(time.Duration(13+100*i)*time.Millisecond), []monitor.Value{{Name: "rss_mb", V: 179.3}})
	}
	rec.End(t0.Add(1200 * time.Millisecond))
	r := &result.Scenario{Iterations: result.Iterations{Measured: 12}, Metrics: map[string]result.Metric{}}
	Attach(r, rec.Report(), true, result.Grid{}, monitor.DefaultGrowthThreshold)
	if g := value(t, r, "rss_growth_mb"); g != 0 {
		t.Errorf("rss_growth_mb of a flat line = %g, want 0", g)
	}
}
