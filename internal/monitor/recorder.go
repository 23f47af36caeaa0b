package monitor

import (
	"maps"
	"math"
	"slices"
	"time"

	"github.com/inferbench/inferbench/result"
)

// Recorder aggregates readings into a window's result.Resources: exact aggregates and bounded
// timelines. It is not safe for concurrent use; Monitor serialises calls.
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
func (r *Recorder) Report() *result.Resources {
	rep := &result.Resources{Start: r.start, End: r.end, Samples: r.ticks}
	if rep.End.IsZero() {
		rep.End = r.lastTick
	}
	names := slices.Sorted(maps.Keys(r.series))
	for _, n := range names {
		s := r.series[n]
		a := result.Aggregate{Name: n, Unit: s.meta.Unit, Better: s.meta.Better}
		if s.meta.Kind == Total {
			a.Kind = "total"
			a.Value = s.last
			rep.Metrics = append(rep.Metrics, a)
			continue
		}
		a.Kind = "gauge"
		a.N, a.Mean, a.Min, a.Max, a.Last = s.n, s.sum/float64(s.n), s.min, s.max, s.last
		rep.Metrics = append(rep.Metrics, a)
		tl := result.Timeline{Name: n, Unit: s.meta.Unit, Every: s.per,
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
