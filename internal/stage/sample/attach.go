package sample

import (
	"math"

	"github.com/inferbench/inferbench/internal/monitor"
	"github.com/inferbench/inferbench/result"
)

// Attach adds what a monitor saw to a scenario: headline figures as metrics, the whole
// window (aggregates, timelines) under extra.resources with whose processes were sampled, under
// which grid, and a warning when memory grew.
func Attach(r *result.Scenario, rep *result.Resources, subjectTree bool, grid result.Grid, th monitor.GrowthThreshold) {
	if r.Metrics == nil {
		r.Metrics = map[string]result.Metric{}
	}
	tree := "harness"
	if subjectTree {
		tree = "subject"
	}
	rep.Tree, rep.Grid = tree, grid
	total := func(name string) (float64, bool) {
		a, ok := rep.Get(name)
		return a.Value, ok && a.Kind == "total"
	}
	// A subject that measured its own peak RSS (an exec command's, from the kernel at its exit)
	// keeps it: the harness tree's figure, inferbench's memory included, stays under resources.
	if _, own := r.Metrics["peak_rss_mb"]; !own {
		if v, ok := total("peak_rss_mb"); ok {
			setValue(r, "peak_rss_mb", v)
			// memory_mb is the metric spec's peak memory: the subject's own figure wins when it
			// reports one; the monitor's is used for subjects whose processes it sampled.
			if _, reported := r.Metrics["memory_mb"]; !reported && subjectTree {
				setValue(r, "memory_mb", v)
			}
		}
	}
	for _, g := range gaugeMetrics {
		if a, ok := rep.Get(g.gauge); ok && a.Kind == "gauge" && a.N > 0 {
			v := a.Mean
			if g.max {
				v = a.Max
			}
			setValue(r, g.metric, v)
		}
	}
	for _, n := range []string{"cpu_s", "io_read_mb", "io_write_mb", "gpu_energy_j", "cpu_energy_j", "dram_energy_j"} {
		if v, ok := total(n); ok {
			setValue(r, n, v)
		}
	}
	attachEnergy(r, rep, grid)
	attachGrowth(r, rep, th)
	r.Warnings = append(r.Warnings, rep.Warnings...)
	r.Extra.Resources = rep
}

// gaugeMetrics are the metrics Attach takes from the monitor's gauges: each gauge's mean over
// the window, or its max.
var gaugeMetrics = []struct {
	gauge, metric string
	max           bool
}{
	{"rss_mb", "rss_mean_mb", false},
	{"cpu_pct", "cpu_pct", false},
	{"gpu_util_pct", "gpu_util_pct", false},
	{"gpu_mem_used_mb", "gpu_mem_peak_mb", true},
	{"gpu_power_w", "gpu_power_w", false},
	{"gpu_temp_c", "gpu_temp_max_c", true},
	{"gpu_sm_clock_mhz", "gpu_sm_clock_mhz", false},
}

// setValue sets r's metric name to the value v, unless v is not finite.
func setValue(r *result.Scenario, name string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	m := result.NewMetric(name)
	m.Value = &v
	r.Metrics[name] = m
}

// attachEnergy adds the energy of the window and its CO2e under grid, and per item and per
// token: mean power over the monitored window divided by the rates the collector measured over
// the measured window (the two windows coincide).
func attachEnergy(r *result.Scenario, rep *result.Resources, grid result.Grid) {
	e := monitor.EnergyFromReport(rep)
	rep.Energy = e.Sources
	if len(e.Sources) == 0 {
		return
	}
	j := e.Total()
	setValue(r, "energy_j", j)
	setValue(r, "co2e_g", grid.CO2eGrams(j))
	if win := rep.Duration().Seconds(); win > 0 {
		watts := j / win
		if v, ok := r.Metrics["throughput_ips"].Center(); ok && v > 0 {
			setValue(r, "energy_per_item_j", watts/v)
		}
		if v, ok := r.Metrics["output_tokens_per_s"].Center(); ok && v > 0 {
			setValue(r, "energy_per_token_j", watts/v)
			setValue(r, "co2e_per_1k_tokens_g", grid.CO2eGrams(1000*watts/v))
		}
	}
}

// attachGrowth fits the growth of RSS over the window, as th judges it: the fit under
// resources, the rise as rss_growth_mb where there is a fit, and a warning when memory grew.
func attachGrowth(r *result.Scenario, rep *result.Resources, th monitor.GrowthThreshold) {
	tl, ok := rep.Timeline("rss_mb")
	if !ok {
		return
	}
	g := monitor.Growth(tl, rep.Duration().Seconds(), r.Iterations.Measured, th)
	rep.Growth = &g
	// A growth figure needs a fit: none from fewer points than the threshold judges (three
	// samples gave "6.6e-31 MB"), nor from a flat line.
	if g.N >= max(th.MinPoints, monitor.DefaultGrowthThreshold.MinPoints) && (g.R2 > 0 || g.SlopeMBPerS != 0) {
		// Below the resolution of RSS (pages of 4 KiB) a rise is rounding: a flat line
		// fitted gave ±1e-30 MB, which compare turned into "-179%".
		rise := g.RiseMB
		if math.Abs(rise) < rssResolutionMB {
			rise = 0
		}
		setValue(r, "rss_growth_mb", rise)
	}
	if w := g.Warning(); w != nil {
		r.Warnings = append(r.Warnings, w.Error())
	}
}

// rssResolutionMB is the smallest RSS change reported as growth: a few pages.
const rssResolutionMB = 0.01
