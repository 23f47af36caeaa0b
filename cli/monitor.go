package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/engine"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/monitor"
	"github.com/inferbench/inferbench/monitor/gpu" // registers the GPU source
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
	"github.com/inferbench/inferbench/sysinfo"
)

func init() {
	runExtensions = append(runExtensions, func() RunExtension { return &monitorExt{} })
	result.Define(resourceInfos...)
}

// resourceInfos are the metrics the monitors add to every scenario (docs/metrics.md, "Resources
// and energy").
var resourceInfos = []result.Info{
	{Name: "peak_rss_mb", Unit: "MB", Better: result.Lower, Doc: "peak resident memory of the process tree under test in the measured window"},
	{Name: "rss_mean_mb", Unit: "MB", Better: result.Lower, Doc: "mean resident memory of the process tree over the samples"},
	{Name: "rss_growth_mb", Unit: "MB", Better: result.Lower, Doc: "least-squares rise of resident memory over the measured window"},
	{Name: "cpu_pct", Unit: "%", Better: result.Lower, Doc: "mean CPU (user+system) of the process tree, percent of one core"},
	{Name: "cpu_s", Unit: "s", Better: result.Lower, Doc: "CPU time (user+system) the process tree used in the measured window"},
	{Name: "io_read_mb", Unit: "MB", Better: result.Lower, Doc: "bytes the process tree read from storage in the measured window"},
	{Name: "io_write_mb", Unit: "MB", Better: result.Lower, Doc: "bytes the process tree wrote to storage in the measured window"},
	{Name: "gpu_util_pct", Unit: "%", Better: result.Higher, Doc: "mean GPU utilisation (percent of time a kernel ran), averaged over devices"},
	{Name: "gpu_mem_peak_mb", Unit: "MB", Better: result.Lower, Doc: "peak GPU memory in use (all processes), summed over devices"},
	{Name: "gpu_power_w", Unit: "W", Better: result.Lower, Doc: "mean GPU board power, summed over devices"},
	{Name: "gpu_temp_max_c", Unit: "°C", Better: result.Lower, Doc: "hottest GPU temperature seen"},
	{Name: "gpu_sm_clock_mhz", Unit: "MHz", Better: result.Higher, Doc: "mean SM clock, averaged over devices"},
	{Name: "gpu_energy_j", Unit: "J", Better: result.Lower, Doc: "GPU energy in the measured window (NVML counter, else power integrated)"},
	{Name: "cpu_energy_j", Unit: "J", Better: result.Lower, Doc: "CPU package energy (RAPL) in the measured window, whole sockets"},
	{Name: "dram_energy_j", Unit: "J", Better: result.Lower, Doc: "DRAM energy (RAPL) in the measured window"},
	{Name: "energy_j", Unit: "J", Better: result.Lower, Doc: "energy of every measured source (CPU package, DRAM, GPU) in the measured window"},
	{Name: "energy_per_item_j", Unit: "J", Better: result.Lower, Doc: "mean power (energy_j / window) divided by throughput_ips"},
	{Name: "energy_per_token_j", Unit: "J", Better: result.Lower, Doc: "mean power divided by output_tokens_per_s"},
	{Name: "co2e_g", Unit: "g", Better: result.Lower, Doc: "energy_j in kWh × PUE × grid intensity (g CO2e/kWh)"},
	{Name: "co2e_per_1k_tokens_g", Unit: "g", Better: result.Lower, Doc: "CO2e of 1000 output tokens"},
}

// monitorExt runs the resource monitors beside every scenario of `inferbench run`.
type monitorExt struct {
	interval time.Duration
	off      bool
	overhead bool
	grid     monitor.Grid
	flags    *pflag.FlagSet

	src  *monitor.Sources
	mu   sync.Mutex
	seen []*suite.Scenario // scenarios measured, for --monitor-overhead
}

func (x *monitorExt) Flags(f *pflag.FlagSet) {
	x.flags = f
	f.DurationVar(&x.interval, "monitor-interval", monitor.DefaultInterval, "resource sampling period (process tree, system, GPU, energy)")
	f.BoolVar(&x.off, "no-monitor", false, "do not sample resources beside the scenarios")
	f.BoolVar(&x.overhead, "monitor-overhead", false, "run every scenario again without monitors and report the difference")
	f.Float64Var(&x.grid.IntensityGPerKWh, "grid-intensity", monitor.DefaultGrid.IntensityGPerKWh, "carbon intensity of the electricity for co2e_g, in g CO2e/kWh")
	f.Float64Var(&x.grid.PUE, "pue", monitor.DefaultGrid.PUE, "power usage effectiveness applied to measured energy for co2e_g")
}

func (x *monitorExt) Start(ctx context.Context, o *IO, dir string) ([]engine.Option, error) {
	if x.off {
		if x.overhead {
			return nil, usageErr("--monitor-overhead needs the monitors: drop --no-monitor")
		}
		return nil, nil
	}
	if x.interval < time.Millisecond {
		return nil, usageErr("--monitor-interval %v: want 1ms or more", x.interval)
	}
	if err := x.grid.Validate(); err != nil {
		return nil, usageErr("--grid-intensity/--pue: %v", err)
	}
	x.src = monitor.Open(ctx, monitor.Config{Interval: x.interval})
	return []engine.Option{engine.WithProbe(x.probe)}, nil
}

// probe starts a Monitor over the subject's processes (or the harness, for subjects that run
// in-process or talk to a server) when the measured window opens.
func (x *monitorExt) probe(ctx context.Context, sc *suite.Scenario, s subject.Subject) (func(*result.Scenario), error) {
	var pids func() []int
	if p, ok := s.(subject.Processes); ok {
		pids = p.PIDs
	}
	m := x.src.Monitor(pids)
	m.Start()
	if x.overhead {
		x.mu.Lock()
		x.seen = append(x.seen, sc)
		x.mu.Unlock()
	}
	return func(r *result.Scenario) {
		attachResources(r, m.Stop(), pids != nil, x.grid, monitor.DefaultGrowthThreshold)
	}, nil
}

// resources is the "resources" section of a scenario's extra data: the monitor's report (its
// fields inline: interval, window, aggregates, timelines, cost) and what was derived from it.
type resources struct {
	*monitor.Report
	// Tree says whose processes were sampled: "subject" (the subject's processes and their
	// children) or "harness" (inferbench itself: in-process subjects, and clients of servers).
	Tree     string                `json:"tree"`
	Grid     monitor.Grid          `json:"grid"`
	Energy   []string              `json:"energy_sources,omitempty"`
	Growth   *monitor.GrowthResult `json:"memory_growth,omitempty"`
	Overhead *overheadResult       `json:"monitor_overhead,omitempty"`
}

// attachResources adds a monitor report to a scenario: headline figures as metrics, the whole
// report (aggregates, timelines) under extra.resources, and a warning when memory grew.
func attachResources(r *result.Scenario, rep *monitor.Report, subjectTree bool, grid monitor.Grid, th monitor.GrowthThreshold) {
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
	res := &resources{Report: rep, Tree: "harness", Grid: grid}
	if subjectTree {
		res.Tree = "subject"
	}
	total := func(name string) (float64, bool) {
		a, ok := rep.Get(name)
		return a.Value, ok && a.Kind == "total"
	}
	gauge := func(name string) (monitor.Aggregate, bool) {
		a, ok := rep.Get(name)
		return a, ok && a.Kind == "gauge" && a.N > 0
	}
	if v, ok := total("peak_rss_mb"); ok {
		set("peak_rss_mb", v)
		// memory_mb is the metric spec's peak memory: the subject's own figure wins when it
		// reports one; the monitor's is used for subjects whose processes it sampled.
		if _, reported := r.Metrics["memory_mb"]; !reported && subjectTree {
			set("memory_mb", v)
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
	res.Energy = e.Sources
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
		res.Growth = &g
		if g.R2 > 0 || g.SlopeMBPerS != 0 {
			set("rss_growth_mb", g.RiseMB)
		}
		if w := g.Warning(); w != nil {
			r.Warnings = append(r.Warnings, w.Error())
		}
	}
	r.Warnings = append(r.Warnings, rep.Warnings...)
	if r.Extra == nil {
		r.Extra = map[string]any{}
	}
	r.Extra["resources"] = res
}

func (x *monitorExt) Finish(ctx context.Context, o *IO, dir string, run *result.Run) (int, error) {
	if x.src == nil {
		return ExitOK, nil
	}
	defer x.src.Close()
	if !x.overhead || run.Partial {
		return ExitOK, nil
	}
	return ExitOK, x.measureOverhead(ctx, o, dir, run)
}

// overheadResult compares a scenario measured with monitors (the run) and without (a second run).
type overheadResult struct {
	LatencyOnMS   float64 `json:"latency_on_ms"`
	LatencyOffMS  float64 `json:"latency_off_ms"`
	LatencyDelta  float64 `json:"latency_delta_pct"`
	P             float64 `json:"p"`           // Mann-Whitney U p-value, latency on vs off
	Significant   bool    `json:"significant"` // P < 0.05
	ThroughputOn  float64 `json:"throughput_on_ips,omitempty"`
	ThroughputOff float64 `json:"throughput_off_ips,omitempty"`
	ThroughputDel float64 `json:"throughput_delta_pct,omitempty"`
	SamplerCost   float64 `json:"sampler_cost_pct"` // the monitors' own sampling time, % of one core
	Order         string  `json:"order"`
}

// measureOverhead runs every measured scenario again with no monitor and reports the difference.
func (x *monitorExt) measureOverhead(ctx context.Context, o *IO, dir string, run *result.Run) error {
	eng := engine.New(engine.WithLoad(x.loadOverrides()), engine.WithEnv(o.Env))
	tw := tabwriter.NewWriter(o.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(o.Stdout, "\nmonitor overhead (each scenario: first with monitors, then again without):")
	fmt.Fprintln(tw, "scenario\tlatency p50 on\toff\tdelta\tthroughput on\toff\tdelta\tsampling cost")
	var errs []error
	for _, sc := range x.seen {
		if ctx.Err() != nil {
			break
		}
		on := findScenario(run, sc.ID())
		if on == nil || on.Status != result.StatusOK {
			continue
		}
		off := eng.RunScenario(ctx, sc)
		if off.Status != result.StatusOK {
			errs = append(errs, fmt.Errorf("%s without monitors: %s", sc.ID(), off.Error))
			continue
		}
		ov := compareOverhead(on, &off)
		if res, ok := on.Extra["resources"].(*resources); ok {
			res.Overhead = ov
		}
		sig := "~"
		if ov.Significant {
			sig = ""
		}
		fmt.Fprintf(tw, "%s\t%.3f ms\t%.3f ms\t%+.2f%%%s\t%.1f/s\t%.1f/s\t%+.2f%%\t%.3f%% of a core\n", sc.ID(),
			ov.LatencyOnMS, ov.LatencyOffMS, ov.LatencyDelta, sig, ov.ThroughputOn, ov.ThroughputOff, ov.ThroughputDel, ov.SamplerCost)
	}
	tw.Flush()
	fmt.Fprintln(o.Stdout, "(~: not significant, Mann-Whitney U p >= 0.05; throughput is one figure per run and is not tested)")
	if err := result.Save(dir, run); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func compareOverhead(on, off *result.Scenario) *overheadResult {
	ov := &overheadResult{Order: "monitors on, then off"}
	lon, lok := on.Metrics["latency_ms"]
	loff, fok := off.Metrics["latency_ms"]
	if lok && fok && lon.Summary != nil && loff.Summary != nil {
		ov.LatencyOnMS, ov.LatencyOffMS = lon.Summary.Median, loff.Summary.Median
		if ov.LatencyOffMS > 0 {
			ov.LatencyDelta = 100 * (ov.LatencyOnMS - ov.LatencyOffMS) / ov.LatencyOffMS
		}
		// Mann-Whitney U on the kept latency samples, as compare and benchstat do.
		if len(lon.Samples) > 0 && len(loff.Samples) > 0 {
			t := stats.MannWhitney(loff.Samples, lon.Samples, stats.DefaultAlpha)
			ov.P = t.P
			ov.Significant = t.P < stats.DefaultAlpha
		}
	}
	if v, ok := on.Metrics["throughput_ips"].Center(); ok {
		ov.ThroughputOn = v
	}
	if v, ok := off.Metrics["throughput_ips"].Center(); ok {
		ov.ThroughputOff = v
		if v > 0 {
			ov.ThroughputDel = 100 * (ov.ThroughputOn - v) / v
		}
	}
	if res, ok := on.Extra["resources"].(*resources); ok && res.Report != nil {
		ov.SamplerCost = res.Report.CostPct
	}
	return ov
}

func findScenario(run *result.Run, id string) *result.Scenario {
	for i := range run.Scenarios {
		if run.Scenarios[i].ID() == id {
			return &run.Scenarios[i]
		}
	}
	return nil
}

// loadOverrides reads the run's load flags again, for the second pass of --monitor-overhead.
func (x *monitorExt) loadOverrides() load.Config {
	var c load.Config
	f := x.flags
	if f == nil {
		return c
	}
	intFlag := func(names ...string) *int {
		for _, n := range names {
			if f.Changed(n) {
				v, err := f.GetInt(n)
				if err == nil {
					return &v
				}
			}
		}
		return nil
	}
	c.WarmupIterations = intFlag("warmup-iterations", "warmup")
	c.MeasurementIterations = intFlag("measurement-iterations", "iterations")
	c.MinTime, _ = f.GetDuration("min-time")
	c.MaxTime, _ = f.GetDuration("max-time")
	c.Timeout, _ = f.GetDuration("timeout")
	return c
}

// listGPUs describes the GPUs for sysinfo through NVML when this build and machine have it, and
// through nvidia-smi otherwise.
func listGPUs(ctx context.Context) []sysinfo.GPU {
	infos, err := gpu.List(ctx, gpu.Config{NoSMI: true})
	if err != nil {
		return sysinfo.NvidiaSMI(ctx)
	}
	out := make([]sysinfo.GPU, 0, len(infos))
	for _, i := range infos {
		out = append(out, sysinfo.GPU{Index: i.Index, Name: i.Name, MemoryMB: int(math.Round(i.MemoryMB)),
			Driver: i.Driver, CUDA: i.CUDA, PowerLimitW: i.PowerLimitW, MIG: i.MIG, ECC: i.ECC,
			ComputeCap: i.ComputeCap, UUID: i.UUID})
	}
	return out
}
