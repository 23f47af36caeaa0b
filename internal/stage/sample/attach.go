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
	set := func(name string, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		m := result.NewMetric(name)
		m.Value = &v
		r.Metrics[name] = m
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
	gauge := func(name string) (result.Aggregate, bool) {
		a, ok := rep.Get(name)
		return a, ok && a.Kind == "gauge" && a.N > 0
	}
	// A subject that measured its own peak RSS (an exec command's, from the kernel at its exit)
	// keeps it: the harness tree's figure, inferbench's memory included, stays under resources.
	if _, own := r.Metrics["peak_rss_mb"]; !own {
		if v, ok := total("peak_rss_mb"); ok {
			set("peak_rss_mb", v)
			// memory_mb is the metric spec's peak memory: the subject's own figure wins when it
			// reports one; the monitor's is used for subjects whose processes it sampled.
			if _, reported := r.Metrics["memory_mb"]; !reported && subjectTree {
				set("memory_mb", v)
			}
		}
	}
	if a, ok := gauge("rss_mb"); ok {
		set("rss_mean_mb", a.Mean)
	}
	if a, ok := gauge("cpu_pct"); ok {
		set("cpu_pct", a.Mean)
	}
	for _, n := range []string{"cpu_s", "io_read_mb", "io_write_mb", "gpu_energy_j", "cpu_energy_j", "dram_energy_j"} {
		if v, ok := total(n); ok {
			set(n, v)
		}
	}
	if a, ok := gauge("gpu_util_pct"); ok {
		set("gpu_util_pct", a.Mean)
	}
	if a, ok := gauge("gpu_mem_used_mb"); ok {
		set("gpu_mem_peak_mb", a.Max)
	}
	if a, ok := gauge("gpu_power_w"); ok {
		set("gpu_power_w", a.Mean)
	}
	if a, ok := gauge("gpu_temp_c"); ok {
		set("gpu_temp_max_c", a.Max)
	}
	if a, ok := gauge("gpu_sm_clock_mhz"); ok {
		set("gpu_sm_clock_mhz", a.Mean)
	}

	// Energy, per item and per token: mean power over the monitored window divided by the rates
	// the collector measured over the measured window (the two windows coincide).
	e := monitor.EnergyFromReport(rep)
	rep.Energy = e.Sources
	if len(e.Sources) > 0 {
		j := e.Total()
		set("energy_j", j)
		set("co2e_g", grid.CO2eGrams(j))
		if win := rep.Duration().Seconds(); win > 0 {
			watts := j / win
			if v, ok := r.Metrics["throughput_ips"].Center(); ok && v > 0 {
				set("energy_per_item_j", watts/v)
			}
			if v, ok := r.Metrics["output_tokens_per_s"].Center(); ok && v > 0 {
				set("energy_per_token_j", watts/v)
				set("co2e_per_1k_tokens_g", grid.CO2eGrams(1000*watts/v))
			}
		}
	}

	if tl, ok := rep.Timeline("rss_mb"); ok {
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
			set("rss_growth_mb", rise)
		}
		if w := g.Warning(); w != nil {
			r.Warnings = append(r.Warnings, w.Error())
		}
	}
	r.Warnings = append(r.Warnings, rep.Warnings...)
	r.Extra.Resources = rep
}

// rssResolutionMB is the smallest RSS change reported as growth: a few pages.
const rssResolutionMB = 0.01
