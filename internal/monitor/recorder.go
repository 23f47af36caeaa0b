package monitor

import (
	"maps"
	"math"
	"slices"
	"sort"
	"time"
)

// Report is what a Monitor measured over one window.
type Report struct {
	Interval   time.Duration `json:"-"`
	IntervalMS float64       `json:"interval_ms"`
	Start      time.Time     `json:"start"`
	End        time.Time     `json:"end"`
	DurationS  float64       `json:"duration_s"` // End - Start, seconds
	Samples    int           `json:"samples"`    // sampling ticks in the window
	// CostS is the time spent taking samples (reading /proc, /sys, NVML) and CostPct that time
	// as a percent of the window: the monitors' own cost in percent of one core. CostClock says
	// how it was measured: "thread-cpu" (the sampling thread's CPU clock, Linux) or "wall".
	CostS       float64        `json:"cost_s"`
	CostPct     float64        `json:"cost_pct"`
	CostClock   string         `json:"cost_clock,omitempty"`
	Metrics     []Aggregate    `json:"metrics"`               // sorted by name
	Timelines   []Timeline     `json:"timelines,omitempty"`   // one per gauge, sorted by name
	Warnings    []string       `json:"warnings,omitempty"`    // failed readings, by sampler; causes of noise (Explainer)
	Details     map[string]any `json:"details,omitempty"`     // what Explainers saw (gpu_noise)
	Unavailable []string       `json:"unavailable,omitempty"` // sources absent on this machine, with the reason
}

// Aggregate summarises one metric over the window. For a gauge, Mean, Min, Max and Last are over
// every sample taken (exact, not from the downsampled timeline); for a total, Value is the figure.
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
	Every int       `json:"every"` // samples per point (1 until the run outgrew the bound)
	T     []float64 `json:"t"`
	V     []float64 `json:"v"`
	Max   []float64 `json:"max"`
}

// Get returns the aggregate named name.
func (r *Report) Get(name string) (Aggregate, bool) {
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
func (r *Report) Timeline(name string) (Timeline, bool) {
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
func (r *Report) Duration() time.Duration {
	if r == nil || r.End.Before(r.Start) {
		return 0
	}
	return r.End.Sub(r.Start)
}

// Recorder aggregates readings into a Report: exact aggregates and bounded timelines. It is not
// safe for concurrent use; Monitor serialises calls.
type Recorder struct {
	meta      map[string]Metric
	series    map[string]*series
	maxPoints int
	start     time.Time
	end       time.Time
	ticks     int
	lastTick  time.Time
}

type series struct {
	meta                Metric
	n                   int
	sum, min, max, last float64
	per                 int // samples per bucket
	pts                 []bucket
}

type bucket struct {
	n    int
	tsum float64
	vsum float64
	max  float64
}

// NewRecorder returns a Recorder for metrics whose timelines hold at most maxPoints points.
func NewRecorder(metrics []Metric, maxPoints int) *Recorder {
	if maxPoints < 2 {
		maxPoints = DefaultMaxPoints
	}
	if maxPoints%2 == 1 {
		maxPoints++
	}
	r := &Recorder{meta: map[string]Metric{}, series: map[string]*series{}, maxPoints: maxPoints}
	for _, m := range metrics {
		r.meta[m.Name] = m
	}
	return r
}

// Begin sets the start of the window; offsets in timelines are measured from it.
func (r *Recorder) Begin(t time.Time) { r.start = t }

// End sets the end of the window.
func (r *Recorder) End(t time.Time) { r.end = t }

// Add records readings taken at t. Readings that are NaN or infinite (a figure the device did not
// report) are skipped. A metric not declared to NewRecorder is treated as a unitless gauge.
func (r *Recorder) Add(t time.Time, values []Value) {
	if len(values) == 0 {
		return
	}
	if r.start.IsZero() {
		r.start = t
	}
	if !t.Equal(r.lastTick) {
		r.ticks++
		r.lastTick = t
	}
	off := t.Sub(r.start).Seconds()
	for _, v := range values {
		if math.IsNaN(v.V) || math.IsInf(v.V, 0) {
			continue
		}
		s := r.series[v.Name]
		if s == nil {
			m, ok := r.meta[v.Name]
			if !ok {
				m = Metric{Name: v.Name, Kind: Gauge}
			}
			s = &series{meta: m, per: 1, min: math.Inf(1), max: math.Inf(-1)}
			r.series[v.Name] = s
		}
		s.add(off, v.V, r.maxPoints)
	}
}

func (s *series) add(t, v float64, maxPoints int) {
	s.n++
	s.sum += v
	s.last = v
	s.min = math.Min(s.min, v)
	s.max = math.Max(s.max, v)
	if s.meta.Kind != Gauge {
		return
	}
	if k := len(s.pts); k > 0 && s.pts[k-1].n < s.per {
		b := &s.pts[k-1]
		b.n++
		b.tsum += t
		b.vsum += v
		b.max = math.Max(b.max, v)
		return
	}
	if len(s.pts) == maxPoints {
		// Halve the resolution: merge neighbours pairwise. Every bucket is full here, so the
		// merged ones are too and the timeline stays evenly spaced.
		half := len(s.pts) / 2
		for i := 0; i < half; i++ {
			a, b := s.pts[2*i], s.pts[2*i+1]
			s.pts[i] = bucket{n: a.n + b.n, tsum: a.tsum + b.tsum, vsum: a.vsum + b.vsum, max: math.Max(a.max, b.max)}
		}
		s.pts = s.pts[:half]
		s.per *= 2
	}
	s.pts = append(s.pts, bucket{n: 1, tsum: t, vsum: v, max: v})
}

// Report returns the aggregates and timelines recorded so far.
func (r *Recorder) Report() *Report {
	rep := &Report{Start: r.start, End: r.end, Samples: r.ticks}
	if rep.End.IsZero() {
		rep.End = r.lastTick
	}
	names := slices.Sorted(maps.Keys(r.series))
	for _, n := range names {
		s := r.series[n]
		a := Aggregate{Name: n, Unit: s.meta.Unit, Better: s.meta.Better}
		if s.meta.Kind == Total {
			a.Kind = "total"
			a.Value = s.last
			rep.Metrics = append(rep.Metrics, a)
			continue
		}
		a.Kind = "gauge"
		a.N, a.Mean, a.Min, a.Max, a.Last = s.n, s.sum/float64(s.n), s.min, s.max, s.last
		rep.Metrics = append(rep.Metrics, a)
		tl := Timeline{Name: n, Unit: s.meta.Unit, Every: s.per,
			T: make([]float64, len(s.pts)), V: make([]float64, len(s.pts)), Max: make([]float64, len(s.pts))}
		for i, b := range s.pts {
			tl.T[i] = round(b.tsum/float64(b.n), 1e3)
			tl.V[i] = round(b.vsum/float64(b.n), 1e4)
			tl.Max[i] = round(b.max, 1e4)
		}
		rep.Timelines = append(rep.Timelines, tl)
	}
	return rep
}

// round keeps timelines compact in JSON: offsets to the millisecond, values to 4 decimals.
func round(x, scale float64) float64 { return math.Round(x*scale) / scale }
