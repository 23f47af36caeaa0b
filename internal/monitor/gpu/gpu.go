// Package gpu samples NVIDIA GPUs beside a benchmark: utilisation, memory used, power,
// temperature, clocks and energy, and describes the devices for the environment fingerprint.
//
// It reads NVML through github.com/NVIDIA/go-nvml, which loads libnvidia-ml.so.1 at run time and
// needs cgo; a binary built with CGO_ENABLED=0 (or the nonvml build tag) falls back to running
// `nvidia-smi --query-gpu=... --format=csv,noheader,nounits -lms N` as one long-lived process and
// parsing its lines. A machine without a GPU, a driver or nvidia-smi has no GPU monitor: Open
// returns an error wrapping monitor.ErrNotAvailable, never a failure of the run.
//
// Importing the package registers the "gpu" source with monitor.Open.
package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/inferbench/inferbench/internal/monitor"
)

func init() {
	monitor.RegisterSource("gpu", func(ctx context.Context, cfg monitor.Config) (monitor.Sampler, error) {
		s, err := Open(ctx, Config{Interval: cfg.Interval})
		if err != nil {
			return nil, err
		}
		return s, nil
	})
}

// Info describes one GPU.
type Info struct {
	Index       int     `json:"index"`
	Name        string  `json:"name"`
	UUID        string  `json:"uuid,omitempty"`
	MemoryMB    float64 `json:"memory_mb"`                    // total memory, MiB
	Driver      string  `json:"driver,omitempty"`             // driver version
	CUDA        string  `json:"cuda,omitempty"`               // highest CUDA version the driver supports
	PowerLimitW float64 `json:"power_limit_w,omitempty"`      // enforced power limit
	MIG         string  `json:"mig,omitempty"`                // "enabled", "disabled", or "" when not supported
	ECC         string  `json:"ecc,omitempty"`                // "enabled", "disabled", or "" when not supported
	ComputeCap  string  `json:"compute_capability,omitempty"` // e.g. "9.0" (NVML only)
	Source      string  `json:"source"`                       // "nvml" or "nvidia-smi"
}

// Reading is one sample of one GPU. A figure the device does not report is NaN.
type Reading struct {
	UtilPct     float64 // percent of time a kernel was running
	MemUsedMB   float64 // MiB
	PowerW      float64
	TempC       float64
	SMClockMHz  float64
	MemClockMHz float64
}

func nanReading() Reading {
	n := math.NaN()
	return Reading{n, n, n, n, n, n}
}

// backend reads GPUs through NVML or nvidia-smi.
type backend interface {
	devices() []Info
	read(i int) (Reading, error)
	// energy returns the device's total-energy counter in millijoules; ok is false when the
	// device has none (before Volta) or the backend cannot read it.
	energy(i int) (mJ uint64, ok bool)
	close() error
}

// Config configures Open.
type Config struct {
	Interval time.Duration // sampling period, for the nvidia-smi loop; 0 means monitor.DefaultInterval
	Devices  []int         // indices to sample; nil means all
	NVMLPath string        // libnvidia-ml path; "" means the loader's default
	SMIPath  string        // nvidia-smi path; "" means from PATH
	NoNVML   bool          // skip NVML and use nvidia-smi
	NoSMI    bool          // do not fall back to nvidia-smi
}

// open tries NVML, then nvidia-smi. The returned error lists why each was not available.
func open(ctx context.Context, cfg Config, stream bool) (backend, error) {
	var errs []error
	if !cfg.NoNVML {
		b, err := openNVML(cfg.NVMLPath)
		if err == nil {
			return b, nil
		}
		errs = append(errs, err)
	}
	if !cfg.NoSMI {
		b, err := openSMI(ctx, cfg, stream)
		if err == nil {
			return b, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("gpu: %w: %w", monitor.ErrNotAvailable, errors.Join(errs...))
}

// List describes the GPUs of the machine, for sysinfo, through NVML or nvidia-smi as cfg allows.
// With no GPU it returns an error wrapping monitor.ErrNotAvailable that says why.
func List(ctx context.Context, cfg Config) ([]Info, error) {
	b, err := open(ctx, cfg, false)
	if err != nil {
		return nil, err
	}
	defer b.close()
	return b.devices(), nil
}

// Sampler is the GPU monitor. It implements monitor.Sampler, Starter, Stopper and Helper.
//
// Gauges (sums or means over the sampled devices): gpu_util_pct (mean), gpu_mem_used_mb (sum),
// gpu_power_w (sum), gpu_temp_c (max), gpu_sm_clock_mhz and gpu_mem_clock_mhz (mean). With more
// than one device each also comes per device as gpuN_*. Total: gpu_energy_j (and gpuN_energy_j),
// from the NVML total-energy counter where every device has one, else power integrated over the
// samples by the trapezoid rule.
type Sampler struct {
	b    backend
	devs []Info

	counter  bool        // every device has an energy counter
	start    []uint64    // counter at Start, mJ
	integ    []float64   // integrated energy, J
	lastW    []float64   // last power reading per device, W
	lastT    []time.Time // when it was taken
	readings []Reading
	names    [][6]string // gauge names: combined, then per device
	noise    noiseState
}

var (
	_ monitor.Sampler   = (*Sampler)(nil)
	_ monitor.Starter   = (*Sampler)(nil)
	_ monitor.Stopper   = (*Sampler)(nil)
	_ monitor.Helper    = (*Sampler)(nil)
	_ monitor.Explainer = (*Sampler)(nil)
)

// Open opens the GPU monitor. It returns an error wrapping monitor.ErrNotAvailable when there is
// no GPU to sample.
func Open(ctx context.Context, cfg Config) (*Sampler, error) {
	b, err := open(ctx, cfg, true)
	if err != nil {
		return nil, err
	}
	s, err := newSampler(b, cfg.Devices)
	if err != nil {
		b.close()
		return nil, err
	}
	return s, nil
}

func newSampler(b backend, pick []int) (*Sampler, error) {
	all := b.devices()
	var devs []Info
	if pick == nil {
		devs = all
	} else {
		for _, i := range pick {
			if i < 0 || i >= len(all) {
				return nil, fmt.Errorf("gpu: device %d: %w (the machine has %d)", i, monitor.ErrNotAvailable, len(all))
			}
			devs = append(devs, all[i])
		}
	}
	if len(devs) == 0 {
		return nil, fmt.Errorf("gpu: %w: no devices", monitor.ErrNotAvailable)
	}
	n := len(devs)
	names := [][6]string{gaugeNames("gpu_")}
	for _, d := range devs {
		names = append(names, gaugeNames("gpu"+strconv.Itoa(d.Index)+"_"))
	}
	return &Sampler{b: b, devs: devs, start: make([]uint64, n), integ: make([]float64, n),
		lastW: make([]float64, n), lastT: make([]time.Time, n), readings: make([]Reading, n), names: names}, nil
}

// Devices returns the sampled devices.
func (s *Sampler) Devices() []Info { return s.devs }

// Name implements monitor.Sampler.
func (s *Sampler) Name() string { return "gpu" }

var gauges = []monitor.Metric{
	{Name: "util_pct", Unit: "%", Better: monitor.Higher, Kind: monitor.Gauge, Help: "percent of time a kernel ran on the GPU"},
	{Name: "mem_used_mb", Unit: "MB", Better: monitor.Lower, Kind: monitor.Gauge, Help: "GPU memory in use (all processes)"},
	{Name: "power_w", Unit: "W", Better: monitor.Lower, Kind: monitor.Gauge, Help: "GPU board power"},
	{Name: "temp_c", Unit: "°C", Kind: monitor.Gauge, Help: "GPU core temperature"},
	{Name: "sm_clock_mhz", Unit: "MHz", Kind: monitor.Gauge, Help: "SM clock"},
	{Name: "mem_clock_mhz", Unit: "MHz", Kind: monitor.Gauge, Help: "memory clock"},
}

// Metrics implements monitor.Sampler.
func (s *Sampler) Metrics() []monitor.Metric {
	var out []monitor.Metric
	prefixes := []string{"gpu_"}
	if len(s.devs) > 1 {
		for _, d := range s.devs {
			prefixes = append(prefixes, "gpu"+strconv.Itoa(d.Index)+"_")
		}
	}
	for _, p := range prefixes {
		for _, g := range gauges {
			g.Name = p + g.Name
			out = append(out, g)
		}
		out = append(out, monitor.Metric{Name: p + "energy_j", Unit: "J", Better: monitor.Lower, Kind: monitor.Total,
			Help: "GPU energy in the window: NVML total-energy counter, or power integrated over the samples"})
	}
	return out
}

// Start implements monitor.Starter: it reads the energy counters.
func (s *Sampler) Start(now time.Time) error {
	s.noise.reset(s)
	s.counter = true
	for i, d := range s.devs {
		mj, ok := s.b.energy(d.Index)
		s.start[i] = mj
		s.counter = s.counter && ok
		s.integ[i] = 0
		s.lastW[i] = math.NaN()
		s.lastT[i] = time.Time{}
	}
	return nil
}

// Sample implements monitor.Sampler.
func (s *Sampler) Sample(now time.Time, out []monitor.Value) ([]monitor.Value, error) {
	var firstErr error
	for i, d := range s.devs {
		r, err := s.b.read(d.Index)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("gpu %d: %w", d.Index, err)
			}
			r = nanReading()
		}
		s.readings[i] = r
	}
	// Trapezoid rule between consecutive power readings of each device; a missing reading is
	// bridged by the next one.
	for i, r := range s.readings {
		if math.IsNaN(r.PowerW) {
			continue
		}
		if dt := now.Sub(s.lastT[i]).Seconds(); !s.lastT[i].IsZero() && dt > 0 {
			s.integ[i] += (s.lastW[i] + r.PowerW) / 2 * dt
		}
		s.lastW[i], s.lastT[i] = r.PowerW, now
	}
	if s.noise.mask == nil {
		s.noise.reset(s) // sampled without Start
	}
	s.noise.sample(s, now)
	out = appendReading(out, &s.names[0], combine(s.readings))
	if len(s.devs) > 1 {
		for i := range s.devs {
			out = appendReading(out, &s.names[i+1], s.readings[i])
		}
	}
	return out, firstErr
}

// Stop implements monitor.Stopper: the window's energy.
func (s *Sampler) Stop(now time.Time, out []monitor.Value) ([]monitor.Value, error) {
	var total float64
	per := make([]float64, len(s.devs))
	for i, d := range s.devs {
		j := s.integ[i]
		if s.counter {
			if mj, ok := s.b.energy(d.Index); ok && mj >= s.start[i] {
				j = float64(mj-s.start[i]) / 1e3
			}
		}
		per[i] = j
		total += j
	}
	out = append(out, monitor.Value{Name: "gpu_energy_j", V: total})
	if len(s.devs) > 1 {
		for i, d := range s.devs {
			out = append(out, monitor.Value{Name: "gpu" + strconv.Itoa(d.Index) + "_energy_j", V: per[i]})
		}
	}
	return out, nil
}

// EnergySource says how gpu_energy_j is measured in the current window: "counter" or "integrated".
func (s *Sampler) EnergySource() string {
	if s.counter {
		return "counter"
	}
	return "integrated"
}

// HelperPIDs implements monitor.Helper.
func (s *Sampler) HelperPIDs() []int {
	if h, ok := s.b.(interface{ pids() []int }); ok {
		return h.pids()
	}
	return nil
}

// Close releases NVML or stops nvidia-smi.
func (s *Sampler) Close() error { return s.b.close() }

// gaugeNames returns the names of the gauges with prefix p, in the order appendReading uses.
func gaugeNames(p string) [6]string {
	return [6]string{p + "util_pct", p + "mem_used_mb", p + "power_w", p + "temp_c", p + "sm_clock_mhz", p + "mem_clock_mhz"}
}

func appendReading(out []monitor.Value, n *[6]string, r Reading) []monitor.Value {
	return append(out,
		monitor.Value{Name: n[0], V: r.UtilPct},
		monitor.Value{Name: n[1], V: r.MemUsedMB},
		monitor.Value{Name: n[2], V: r.PowerW},
		monitor.Value{Name: n[3], V: r.TempC},
		monitor.Value{Name: n[4], V: r.SMClockMHz},
		monitor.Value{Name: n[5], V: r.MemClockMHz},
	)
}

// combine folds per-device readings into one: utilisation and clocks are means, memory and power
// sums, temperature the hottest. NaN figures are left out; all NaN gives NaN.
func combine(rs []Reading) Reading {
	if len(rs) == 1 {
		return rs[0]
	}
	type acc struct {
		sum, max float64
		n        int
	}
	var a [6]acc
	for i := range a {
		a[i].max = math.Inf(-1)
	}
	for _, r := range rs {
		for i, v := range []float64{r.UtilPct, r.MemUsedMB, r.PowerW, r.TempC, r.SMClockMHz, r.MemClockMHz} {
			if !math.IsNaN(v) {
				a[i].sum += v
				a[i].max = math.Max(a[i].max, v)
				a[i].n++
			}
		}
	}
	mean := func(x acc) float64 {
		if x.n == 0 {
			return math.NaN()
		}
		return x.sum / float64(x.n)
	}
	sum := func(x acc) float64 {
		if x.n == 0 {
			return math.NaN()
		}
		return x.sum
	}
	hot := func(x acc) float64 {
		if x.n == 0 {
			return math.NaN()
		}
		return x.max
	}
	return Reading{mean(a[0]), sum(a[1]), sum(a[2]), hot(a[3]), mean(a[4]), mean(a[5])}
}
