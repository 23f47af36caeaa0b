package result

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"time"

	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/stats"
)

// Extra holds a scenario's sections beyond its metrics (run.json's "extra"): what the monitors
// saw, the server the definition started, the serving load's SLOs, steady window and sweep steps,
// and the failed calls by kind. A section is nil (or false, or empty) when absent. Its JSON is one
// object with a key per present section, as run.json has always had it; sections this version
// does not know are kept in Other and written back unchanged.
type Extra struct {
	Resources    *Resources     // "resources": the resource monitors' report of the measured window
	Server       *Server        // "server": the server the definition's server block started
	SLO          *SLO           // "slo": the serving SLOs over the measured requests
	SteadyWindow *SteadyWindow  // "steady_window": closed loop, until the first worker stopped
	Sweep        []SweepStep    // "sweep": the steps of a sweep load
	Slices       []SliceStat    // "slices": a serving load's measured phase, slice by slice
	Turns        []TurnStat     // "turns": the measured sessions of mode sessions, turn by turn
	ClientBound  bool           // "client_bound": the client may have limited the figures (see the warnings)
	ErrorsByKind map[string]int // "errors_by_kind": failed measured calls by kind (http_503, timeout, ...)
	Certificate  *Certificate   // "certificate": whether a serving scenario's figures are the server's (docs/certificate.md)
	// Window, Histograms and Agents are scale-out's (docs/scale-out.md): what load agents keep so
	// that their merge is exact, and what the merge says of them.
	Window     *Window                     // "window": the measured window and its counts
	Histograms map[string]*stats.Histogram // "histograms": full-resolution, by metric name
	Agents     *Skew                       // "agents": how the agents of a merged scenario lined up
	// Other holds sections by name that none of the fields above takes, as raw JSON.
	Other map[string]json.RawMessage
}

// Section names in run.json.
const (
	SectionResources    = "resources"
	sectionServer       = "server"
	SectionSLO          = "slo"
	SectionSteadyWindow = "steady_window"
	SectionSweep        = "sweep"
	SectionSlices       = "slices"
	SectionTurns        = "turns"
	SectionClientBound  = "client_bound"
	sectionErrorsByKind = "errors_by_kind"
	SectionCertificate  = "certificate"
	sectionWindow       = "window"
	sectionHistograms   = "histograms"
	sectionAgents       = "agents"
)

// Resources is the resource monitors' report of a scenario's measured window (docs/results.md,
// "resources"): aggregates and timelines of the process tree, the system, the GPUs and energy,
// and what was derived from them.
type Resources struct {
	IntervalMS float64   `json:"interval_ms"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	DurationS  float64   `json:"duration_s"` // End - Start, seconds
	Samples    int       `json:"samples"`    // sampling ticks in the window
	// CostS is the time spent taking samples and CostPct that time as a percent of the window;
	// CostClock says how it was measured: "thread-cpu" or "wall".
	CostS       float64     `json:"cost_s"`
	CostPct     float64     `json:"cost_pct"`
	CostClock   string      `json:"cost_clock,omitempty"`
	Metrics     []Aggregate `json:"metrics"`               // sorted by name
	Timelines   []Timeline  `json:"timelines,omitempty"`   // one per gauge, sorted by name
	Warnings    []string    `json:"warnings,omitempty"`    // failed readings, by sampler; causes of noise the samplers saw
	Unavailable []string    `json:"unavailable,omitempty"` // sources absent on this machine, with the reason
	// Tree says whose processes were sampled: "subject" (the subject's processes and their
	// children) or "harness" (inferbench itself: in-process subjects, and clients of servers).
	Tree     string    `json:"tree"`
	Grid     Grid      `json:"grid"`
	Energy   []string  `json:"energy_sources,omitempty"`
	Growth   *Growth   `json:"memory_growth,omitempty"`
	Overhead *Overhead `json:"monitor_overhead,omitempty"`
	// Details is what the monitors saw that explains the window beyond the gauges.
	Details *ResourceDetails `json:"details,omitempty"`
}

// ResourceDetails is what the monitors saw beyond their gauges (docs/metrics.md, "GPU noise").
type ResourceDetails struct {
	GPUNoise *GPUNoise `json:"gpu_noise,omitempty"`
}

// GPUNoise is what explains latency noise on the GPUs during the window (NVML): the clock event
// ("throttle") reasons seen and in how many samples, the SM and memory clock ranges, the compute
// processes seen (PID and name), the enforced and default power limits, or why reasons and
// processes are unknown (the nvidia-smi fallback).
type GPUNoise struct {
	Samples        int            `json:"samples"`
	Reasons        map[string]int `json:"clock_event_reasons,omitempty"`
	SMClockMinMHz  float64        `json:"sm_clock_min_mhz,omitempty"`
	SMClockMaxMHz  float64        `json:"sm_clock_max_mhz,omitempty"`
	MemClockMinMHz float64        `json:"mem_clock_min_mhz,omitempty"`
	MemClockMaxMHz float64        `json:"mem_clock_max_mhz,omitempty"`
	Processes      []string       `json:"processes,omitempty"`
	PowerLimitW    float64        `json:"power_limit_w,omitempty"`
	DefaultLimitW  float64        `json:"default_power_limit_w,omitempty"`
	Unavailable    string         `json:"unavailable,omitempty"`
}

// Aggregate summarises one monitored quantity over the window. For a gauge, Mean, Min, Max and
// Last are over every sample taken (exact, not from the downsampled timeline); for a total, Value
// is the figure.
type Aggregate struct {
	Name   string  `json:"name"`
	Unit   string  `json:"unit"`
	Better string  `json:"better,omitempty"`
	Kind   string  `json:"kind"` // "gauge" or "total"
	N      int     `json:"n,omitempty"`
	Mean   float64 `json:"mean,omitempty"`
	Min    float64 `json:"min,omitempty"`
	Max    float64 `json:"max,omitempty"`
	Last   float64 `json:"last,omitempty"`
	Value  float64 `json:"value,omitempty"`
}

// Timeline is a gauge over the window, downsampled to a bounded number of points. Each point is a
// bucket of consecutive samples: T is the mean offset of its samples from the window start in
// seconds, V their mean and Max their largest value.
type Timeline struct {
	Name  string    `json:"name"`
	Unit  string    `json:"unit"`
	Every int       `json:"every"` // samples per point (1 until the window outgrew the bound)
	T     []float64 `json:"t"`
	V     []float64 `json:"v"`
	Max   []float64 `json:"max"`
}

// Get returns the aggregate named name (Metrics is sorted by name).
func (r *Resources) Get(name string) (Aggregate, bool) {
	if r == nil {
		return Aggregate{}, false
	}
	i := sort.Search(len(r.Metrics), func(i int) bool { return r.Metrics[i].Name >= name })
	if i < len(r.Metrics) && r.Metrics[i].Name == name {
		return r.Metrics[i], true
	}
	return Aggregate{}, false
}

// Timeline returns the timeline of the gauge named name.
func (r *Resources) Timeline(name string) (Timeline, bool) {
	if r == nil {
		return Timeline{}, false
	}
	for _, t := range r.Timelines {
		if t.Name == name {
			return t, true
		}
	}
	return Timeline{}, false
}

// Duration returns the length of the window.
func (r *Resources) Duration() time.Duration {
	if r == nil || r.End.Before(r.Start) {
		return 0
	}
	return r.End.Sub(r.Start)
}

// Grid describes the electricity behind a measurement, for the CO2e estimate.
type Grid struct {
	// IntensityGPerKWh is the carbon intensity of the electricity in grams of CO2-equivalent per
	// kilowatt-hour. The default, 475, is the IEA's global average; use your region's figure.
	IntensityGPerKWh float64 `json:"intensity_g_per_kwh" yaml:"intensity_g_per_kwh"`
	// PUE is the data centre's power usage effectiveness: facility energy over IT energy. The
	// default, 1.0, counts only the energy measured at the devices (a workstation, or a figure
	// to be scaled later); set 1.1–1.6 for a data centre.
	PUE float64 `json:"pue" yaml:"pue"`
}

// DefaultGrid is 475 g/kWh at a PUE of 1.0.
var DefaultGrid = Grid{IntensityGPerKWh: 475, PUE: 1.0}

// Validate reports an intensity or PUE that cannot be right.
func (g Grid) Validate() error {
	if g.IntensityGPerKWh < 0 || math.IsNaN(g.IntensityGPerKWh) {
		return fmt.Errorf("grid intensity %v g/kWh: must be zero or more", g.IntensityGPerKWh)
	}
	if g.PUE < 1 || math.IsNaN(g.PUE) {
		return fmt.Errorf("PUE %v: must be 1.0 or more (facility energy over IT energy)", g.PUE)
	}
	return nil
}

// CO2eGrams returns the grams of CO2-equivalent for joules measured at the devices:
// joules / 3.6e6 (kWh) × PUE × intensity.
func (g Grid) CO2eGrams(joules float64) float64 {
	pue := g.PUE
	if pue == 0 {
		pue = 1
	}
	return joules / 3.6e6 * pue * g.IntensityGPerKWh
}

// Growth is the least-squares line through resident memory over the measured window: a leak
// shows as a rise.
type Growth struct {
	N           int     `json:"n"`                // points fitted: the steady half's, or all when not judged
	SlopeMBPerS float64 `json:"slope_mb_per_s"`   // MB per second
	PerIterMB   float64 `json:"per_iteration_mb"` // MB per measured iteration (0 when unknown)
	RiseMB      float64 `json:"rise_mb"`          // slope × window length
	StartMB     float64 `json:"start_mb"`         // fitted level at the start of the fitted part (the steady half)
	R2          float64 `json:"r2"`               // coefficient of determination of the fit
	Flagged     bool    `json:"flagged"`          // growth exceeds the threshold
	Reason      string  `json:"reason,omitempty"` // why it is flagged, or why it could not be judged
}

// Warning returns the flag as an error for a scenario's warnings, or nil.
func (g Growth) Warning() error {
	if !g.Flagged {
		return nil
	}
	return fmt.Errorf("memory growth: %s", g.Reason)
}

// Overhead compares a scenario measured with monitors (the run) and again without them.
type Overhead struct {
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

// Server is the server a definition's server block started for the scenario, or reused.
type Server struct {
	// Command is the server's command line. The fields stand in the order of their JSON keys,
	// sorted as this section has always been written.
	Command string  `json:"command"`
	Log     string  `json:"log,omitempty"`     // its output, in the run folder
	Reused  bool    `json:"reused,omitempty"`  // the previous scenario's server, same command
	StartS  float64 `json:"start_s,omitempty"` // start until healthy, seconds (when started)
}

// SLO says whether the serving SLOs held over the measured requests.
type SLO struct {
	Failures   []string           `json:"failures"` // why not, one line per objective missed
	Hold       bool               `json:"hold"`
	Objectives map[string]float64 `json:"objectives"` // metric.stat -> limit
}

// SteadyWindow is a closed loop's measured time until its first worker ran out of requests.
type SteadyWindow struct {
	End      time.Time `json:"end"`
	Requests int       `json:"requests"`
	Start    time.Time `json:"start"`
}

// SweepStep is one step of a sweep load: its rate or concurrency and what it achieved.
type SweepStep struct {
	Name        string             `json:"name"`
	TargetRPS   float64            `json:"target_rps,omitempty"`
	Concurrency int                `json:"concurrency,omitempty"`
	Requests    int                `json:"requests"`
	Failed      int                `json:"failed"`
	RPS         float64            `json:"requests_per_s"`
	GoodputRPS  float64            `json:"goodput_rps"`
	Stats       map[string]float64 `json:"stats"` // "ttft_ms.p50", ...
	SLOsHold    *bool              `json:"slos_hold,omitempty"`
	SLOFailures []string           `json:"slo_failures,omitempty"`
	LagP99      float64            `json:"schedule_lag_p99_ms,omitempty"`
	CPUCores    float64            `json:"client_cpu_cores"`
}

// SliceStat is what the requests sent in one time slice of a serving load's measured phase did
// (extra.slices, one per load.Config.Slice; docs/serving.md).
type SliceStat struct {
	StartS    float64            `json:"start_s"` // the slice's start, in seconds from the measured phase's
	EndS      float64            `json:"end_s"`
	Requests  int                `json:"requests"` // requests sent in the slice
	Failed    int                `json:"failed"`
	RPS       float64            `json:"requests_per_s"` // successful requests sent in the slice / its length
	Quantiles map[string]float64 `json:"quantiles"`      // "ttft_ms.p50", "tpot_ms.p99", ... of those requests
}

// TurnStat summarises one turn of the measured sessions of load mode sessions (extra.turns):
// the requests of that turn that streamed, and their TTFT and end-to-end latency.
type TurnStat struct {
	Turn     int     `json:"turn"` // from 1
	Requests int     `json:"requests"`
	TTFTP50  float64 `json:"ttft_ms_p50"`
	TTFTP99  float64 `json:"ttft_ms_p99"`
	E2EP50   float64 `json:"e2e_ms_p50"`
	E2EP99   float64 `json:"e2e_ms_p99"`
}

// fields returns e's typed sections by name, each a pointer to its field: the one list of them
// that writing, reading and setting a section all go by.
func (e *Extra) fields() map[string]any {
	return map[string]any{
		SectionResources:    &e.Resources,
		sectionServer:       &e.Server,
		SectionSLO:          &e.SLO,
		SectionSteadyWindow: &e.SteadyWindow,
		SectionSweep:        &e.Sweep,
		SectionSlices:       &e.Slices,
		SectionTurns:        &e.Turns,
		SectionClientBound:  &e.ClientBound,
		sectionErrorsByKind: &e.ErrorsByKind,
		SectionCertificate:  &e.Certificate,
		sectionWindow:       &e.Window,
		sectionHistograms:   &e.Histograms,
		sectionAgents:       &e.Agents,
	}
}

// IsZero reports whether no section is present (run.json then has no "extra").
func (e Extra) IsZero() bool {
	if len(e.Other) > 0 {
		return false
	}
	for _, p := range e.fields() {
		if !reflect.ValueOf(p).Elem().IsZero() {
			return false
		}
	}
	return true
}

// sections returns the present sections by name: a typed one is present when its field is not
// nil (or false).
func (e Extra) sections() map[string]any {
	m := map[string]any{}
	for k, v := range e.Other {
		m[k] = v
	}
	for name, p := range e.fields() {
		if v := reflect.ValueOf(p).Elem(); !v.IsZero() {
			m[name] = v.Interface()
		}
	}
	return m
}

// MarshalJSON writes the present sections as one object, keys sorted.
func (e Extra) MarshalJSON() ([]byte, error) { return json.Marshal(e.sections()) }

// UnmarshalJSON reads the sections; unknown ones go to Other.
func (e *Extra) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*e = Extra{}
	fields := e.fields()
	for k, v := range raw {
		if err := e.setRaw(fields, k, v); err != nil {
			return err
		}
	}
	return nil
}

// setRaw decodes one section from JSON into its field among fields (e's), or into Other. A
// section held by a pointer is a new value even when its JSON is null.
func (e *Extra) setRaw(fields map[string]any, name string, data json.RawMessage) error {
	dst, ok := fields[name]
	if !ok {
		if e.Other == nil {
			e.Other = map[string]json.RawMessage{}
		}
		e.Other[name] = append(json.RawMessage(nil), data...)
		return nil
	}
	if f := reflect.ValueOf(dst).Elem(); f.Kind() == reflect.Pointer {
		f.Set(reflect.New(f.Type().Elem()))
		dst = f.Interface()
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return fmt.Errorf("extra.%s: %w", name, err)
	}
	return nil
}

// Set stores a section given by name, as a load driver reports it (load.Reporter): a value of
// the section's type is kept as it is; any other value is converted through its JSON form, and
// a name no field takes goes to Other. A non-finite float in it is written as null.
func (e *Extra) Set(name string, v any) error {
	fields := e.fields()
	if dst, ok := fields[name]; ok {
		if f := reflect.ValueOf(dst).Elem(); v != nil && reflect.TypeOf(v) == f.Type() {
			f.Set(reflect.ValueOf(v))
			return nil
		}
	}
	// A non-finite figure is written as null (package finite), not the whole section lost.
	data, err := finite.Marshal(v)
	if err != nil {
		return fmt.Errorf("extra.%s: %w", name, err)
	}
	return e.setRaw(fields, name, data)
}
