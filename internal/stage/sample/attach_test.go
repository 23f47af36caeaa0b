package sample

import (
	"bytes"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/monitor"
	"github.com/inferbench/inferbench/internal/testkit/schematest"
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
	Attach(r, rep, true, result.Grid{IntensityGPerKWh: 400, PUE: 1.5}, monitor.DefaultGrowthThreshold)

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
	Attach(r, rec.Report(), true, result.DefaultGrid, monitor.DefaultGrowthThreshold)
	if got := value(t, r, "memory_mb"); got != 900 {
		t.Errorf("memory_mb = %v, want the subject's 900", got)
	}
	r = &result.Scenario{}
	Attach(r, rec.Report(), false, result.DefaultGrid, monitor.DefaultGrowthThreshold)
	if _, ok := r.Metrics["memory_mb"]; ok {
		t.Error("memory_mb set from the harness's own memory")
	}
}

// TestAttachResourcesKeepsGPUNoise: what the GPU sampler explains about its window
// (gpu.Sampler.Explain: clock event reasons, clock ranges, processes, power limits) reaches
// run.json as extra.resources.details.gpu_noise, valid against docs/run.schema.json, and reads
// back. On an H100 every scenario's run.json lacked it: the typed resources section had no place
// for it.
func TestAttachResourcesKeepsGPUNoise(t *testing.T) {
	rec := monitor.NewRecorder([]monitor.Metric{{Name: "gpu_util_pct", Unit: "%", Kind: monitor.Gauge}}, 16)
	t0 := time.Unix(0, 0)
	rec.Begin(t0)
	rec.Add(t0, []monitor.Value{{Name: "gpu_util_pct", V: 90}})
	rec.End(t0.Add(time.Second))
	rep := rec.Report()
	noise := result.GPUNoise{
		Samples: 10, Reasons: map[string]int{"sw_power_cap": 4, "gpu_idle": 1},
		SMClockMinMHz: 1500, SMClockMaxMHz: 1980, MemClockMinMHz: 2619, MemClockMaxMHz: 2619,
		Processes: []string{"101 python3", "202 other"}, PowerLimitW: 500, DefaultLimitW: 700,
	}
	rep.Details = &result.ResourceDetails{GPUNoise: &noise}
	sc := &result.Scenario{}
	Attach(sc, rep, true, result.Grid{IntensityGPerKWh: 400, PUE: 1}, monitor.DefaultGrowthThreshold)
	got := sc.Extra.Resources.Details
	if got == nil || got.GPUNoise == nil {
		t.Fatalf("extra.resources.details = %+v, want the gpu_noise of the report", got)
	}

	files, _ := filepath.Glob("../../../result/testdata/v1/*.json")
	if len(files) == 0 {
		t.Fatal("no result/testdata/v1 files")
	}
	r, err := result.Load(files[0])
	if err != nil {
		t.Fatal(err)
	}
	r.Scenarios[0].Extra.Resources = sc.Extra.Resources
	var b bytes.Buffer
	if err := result.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte(`"gpu_noise"`)) || !bytes.Contains(b.Bytes(), []byte(`"sw_power_cap": 4`)) {
		t.Fatal("run.json holds no gpu_noise")
	}
	schematest.ValidateRun(t, b.Bytes())
	back, err := result.Decode(b.Bytes(), "run.json")
	if err != nil {
		t.Fatal(err)
	}
	rd := back.Scenarios[0].Extra.Resources.Details
	if rd == nil || rd.GPUNoise == nil || !reflect.DeepEqual(*rd.GPUNoise, noise) {
		t.Fatalf("read back %+v, want %+v", rd, noise)
	}
}
