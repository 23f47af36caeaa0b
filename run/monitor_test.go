package run

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/monitor"
	"github.com/inferbench/inferbench/result"
)

func value(t *testing.T, r *result.Scenario, name string) float64 {
	t.Helper()
	m, ok := r.Metrics[name]
	if !ok || m.Value == nil {
		t.Fatalf("no metric %s in %v", name, r.Metrics)
	}
	return *m.Value
}

// TestAttachResources checks the mapping from a monitor report to a scenario's metrics.
func TestAttachResources(t *testing.T) {
	rec := monitor.NewRecorder([]monitor.Metric{
		{Name: "rss_mb", Unit: "MB", Kind: monitor.Gauge},
		{Name: "cpu_pct", Unit: "%", Kind: monitor.Gauge},
		{Name: "gpu_power_w", Unit: "W", Kind: monitor.Gauge},
		{Name: "gpu_mem_used_mb", Unit: "MB", Kind: monitor.Gauge},
		{Name: "peak_rss_mb", Unit: "MB", Kind: monitor.Total},
		{Name: "gpu_energy_j", Unit: "J", Kind: monitor.Total},
		{Name: "cpu_energy_j", Unit: "J", Kind: monitor.Total},
	}, 64)
	t0 := time.Unix(0, 0)
	rec.Begin(t0)
	// 10 s: RSS grows from 100 MB at 3 MB/s (a leak), the GPU draws 250 W.
	for i := 0; i <= 100; i++ {
		x := float64(i) / 10
		rec.Add(t0.Add(time.Duration(i)*100*time.Millisecond), []monitor.Value{
			{Name: "rss_mb", V: 100 + 3*x}, {Name: "cpu_pct", V: 50}, {Name: "gpu_power_w", V: 250}, {Name: "gpu_mem_used_mb", V: 1000 + x},
		})
	}
	end := t0.Add(10 * time.Second)
	rec.Add(end, []monitor.Value{{Name: "peak_rss_mb", V: 131}, {Name: "gpu_energy_j", V: 2500}, {Name: "cpu_energy_j", V: 500}})
	rec.End(end)
	rep := rec.Report()

	ips, tps := 20.0, 300.0
	r := &result.Scenario{
		Iterations: result.Iterations{Measured: 200},
		Metrics: map[string]result.Metric{
			"throughput_ips":      {Unit: "items/s", Better: "higher", Value: &ips},
			"output_tokens_per_s": {Unit: "tokens/s", Better: "higher", Value: &tps},
		},
	}
	attachResources(r, rep, true, monitor.Grid{IntensityGPerKWh: 400, PUE: 1.5}, monitor.DefaultGrowthThreshold)

	for name, want := range map[string]float64{
		"peak_rss_mb":          131,
		"memory_mb":            131,
		"rss_mean_mb":          115,
		"cpu_pct":              50,
		"gpu_power_w":          250,
		"gpu_mem_peak_mb":      1010,
		"gpu_energy_j":         2500,
		"cpu_energy_j":         500,
		"energy_j":             3000,
		"energy_per_item_j":    300.0 / 20, // 300 W over 20 items/s
		"energy_per_token_j":   1,          // 300 W over 300 tokens/s
		"co2e_g":               3000 / 3.6e6 * 1.5 * 400,
		"co2e_per_1k_tokens_g": 1000 / 3.6e6 * 1.5 * 400,
		"rss_growth_mb":        30,
	} {
		if got := value(t, r, name); math.Abs(got-want) > 1e-6*math.Max(1, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "memory growth") {
		t.Errorf("warnings = %q, want the memory-growth warning", r.Warnings)
	}
	res := r.Extra.Resources
	if res == nil || res.Tree != "subject" || res.Growth == nil || !res.Growth.Flagged {
		t.Errorf("extra.resources = %+v", r.Extra.Resources)
	}
	for _, n := range []string{"peak_rss_mb", "energy_per_token_j", "co2e_g", "rss_growth_mb"} {
		if i, ok := result.Lookup(n); !ok || i.Doc == "" {
			t.Errorf("%s is not in the metric catalogue", n)
		}
	}
}

// TestAttachResourcesSubjectMemoryWins: a subject that reports memory_mb keeps its figure, and
// the harness's memory is not reported as the subject's.
func TestAttachResourcesSubjectMemoryWins(t *testing.T) {
	rec := monitor.NewRecorder([]monitor.Metric{{Name: "peak_rss_mb", Kind: monitor.Total}}, 16)
	rec.Add(time.Unix(0, 0), []monitor.Value{{Name: "peak_rss_mb", V: 50}})
	mem := 900.0
	r := &result.Scenario{Metrics: map[string]result.Metric{"memory_mb": {Value: &mem}}}
	attachResources(r, rec.Report(), true, monitor.DefaultGrid, monitor.DefaultGrowthThreshold)
	if got := value(t, r, "memory_mb"); got != 900 {
		t.Errorf("memory_mb = %v, want the subject's 900", got)
	}
	r = &result.Scenario{}
	attachResources(r, rec.Report(), false, monitor.DefaultGrid, monitor.DefaultGrowthThreshold)
	if _, ok := r.Metrics["memory_mb"]; ok {
		t.Error("memory_mb set from the harness's own memory")
	}
}
