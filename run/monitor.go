package run

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/inferbench/inferbench/engine"
	"github.com/inferbench/inferbench/internal/monitor"
	"github.com/inferbench/inferbench/internal/monitor/gpu" // registers the GPU source
	"github.com/inferbench/inferbench/internal/sysinfo"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// The sample stage: monitors run beside every scenario's measured window (a probe of the engine)
// and attach what they saw to its result; with Monitor.Overhead every measured scenario runs again
// without them.

func (m Monitor) validate() error {
	if m.Off {
		if m.Overhead {
			return usageErr("--monitor-overhead needs the monitors: drop --no-monitor")
		}
		return nil
	}
	if m.Interval != 0 && m.Interval < time.Millisecond {
		return usageErr("--monitor-interval %v: want 1ms or more", m.Interval)
	}
	if m.Grid != (result.Grid{}) {
		if err := m.Grid.Validate(); err != nil {
			return usageErr("--grid-intensity/--pue: %v", err)
		}
	}
	return nil
}

// monitors are the sources sampled beside every scenario of a run.
type monitors struct {
	cfg  Monitor
	src  *monitor.Sources
	mu   sync.Mutex
	seen []*suite.Scenario // scenarios measured, for Monitor.Overhead
}

func (p *pipeline) startMonitors(ctx context.Context) *monitors {
	m := &monitors{cfg: p.o.Monitor}
	if m.cfg.Off {
		return m
	}
	if m.cfg.Interval == 0 {
		m.cfg.Interval = monitor.DefaultInterval
	}
	if m.cfg.Grid == (result.Grid{}) {
		m.cfg.Grid = result.DefaultGrid
	}
	m.src = monitor.Open(ctx, monitor.Config{Interval: m.cfg.Interval})
	return m
}

// options are the engine options that run the monitors.
func (m *monitors) options() []engine.Option {
	if m.src == nil {
		return nil
	}
	return []engine.Option{engine.WithProbe(m.probe)}
}

func (m *monitors) close() {
	if m.src != nil {
		m.src.Close()
	}
}

// probe starts a Monitor over the subject's processes (or the harness, for subjects that run
// in-process or talk to a server) when the measured window opens.
func (m *monitors) probe(ctx context.Context, sc *suite.Scenario, s subject.Subject) (func(*result.Scenario), error) {
	var pids func() []int
	if p, ok := s.(subject.Processes); ok {
		pids = p.PIDs
	}
	extra, warning := serverSamplers(ctx, s)
	mon := m.src.Monitor(pids, extra...)
	mon.Start()
	if m.cfg.Overhead {
		m.mu.Lock()
		m.seen = append(m.seen, sc)
		m.mu.Unlock()
	}
	return func(r *result.Scenario) {
		attachResources(r, mon.Stop(), pids != nil, m.cfg.Grid, monitor.DefaultGrowthThreshold)
		if warning != "" {
			r.Warnings = append(r.Warnings, warning)
		}
	}, nil
}

// attachResources adds what a monitor saw to a scenario: headline figures as metrics, the whole
// window (aggregates, timelines) under extra.resources with whose processes were sampled, under
// which grid, and a warning when memory grew.
func attachResources(r *result.Scenario, rep *result.Resources, subjectTree bool, grid result.Grid, th monitor.GrowthThreshold) {
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

// overheadRow is one scenario of the overhead pass, for the render stage.
type overheadRow struct {
	id string
	ov *result.Overhead
}

// overhead runs every measured scenario again with no monitor (Monitor.Overhead) and attaches
// the difference to its resources. Nothing runs for an interrupted run.
func (m *monitors) overhead(ctx context.Context, p *pipeline, run *result.Run) []overheadRow {
	if m.src == nil || !m.cfg.Overhead || run.Partial {
		return nil
	}
	eng := engine.New(engine.WithLoad(p.o.Load), engine.WithEnv(p.o.Env))
	var rows []overheadRow
	var errs []error
	for _, sc := range m.seen {
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
		if on.Extra.Resources != nil {
			on.Extra.Resources.Overhead = ov
		}
		rows = append(rows, overheadRow{sc.ID(), ov})
	}
	p.errs = append(p.errs, errors.Join(errs...))
	if rows == nil {
		rows = []overheadRow{} // the table is printed, empty
	}
	return rows
}

func compareOverhead(on, off *result.Scenario) *result.Overhead {
	ov := &result.Overhead{Order: "monitors on, then off"}
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
	if res := on.Extra.Resources; res != nil {
		ov.SamplerCost = res.CostPct
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

// Sysinfo returns the environment fingerprint recorded with every run: sysinfo's, with the GPUs
// listed through NVML when this build and machine have it, and version as inferbench's version.
func Sysinfo(ctx context.Context, env Env, version string) sysinfo.Info {
	info := sysinfo.Collect(ctx, sysinfo.Options{Dir: env.Dir, Python: env.Python(), GPUs: listGPUs})
	info.Inferbench = version
	return info
}
