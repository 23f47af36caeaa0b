package stats

import (
	"math/rand/v2"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// defaultMaxSamples is how many raw samples a Dist holds before it summarises from a histogram,
// unless NewDist is given another bound: 2^20 float64 values, 8 MiB.
const defaultMaxSamples = 1 << 20

// Histogram resolution: values are recorded in units of 1/histScale (micro-units: a millisecond
// metric is resolved to the nanosecond) with three significant digits.
const (
	histScale   = 1e3
	histHighest = 1e15 // 10^12 units of the metric
	histDigits  = 3
)

// Dist accumulates the samples of one metric. It keeps every raw sample up to its limit; past
// that it records into an HDR histogram (exact count, mean, min and max; percentiles to three
// significant digits) and keeps a uniform reservoir of raw samples for statistical tests.
// The zero value is not usable; call NewDist. A Dist is not safe for concurrent use.
type Dist struct {
	limit int
	raw   []float64
	hist  *hdrhistogram.Histogram // nil until the raw limit is passed
	rng   *rand.Rand
	moments
}

// NewDist returns an empty Dist that holds at most maxSamples raw samples (2^20, 8 MiB, when
// maxSamples <= 0).
func NewDist(maxSamples int) *Dist {
	if maxSamples <= 0 {
		maxSamples = defaultMaxSamples
	}
	return &Dist{limit: maxSamples, moments: newMoments()}
}

// Add records one sample.
func (d *Dist) Add(x float64) {
	d.add(x)
	if d.hist == nil {
		if len(d.raw) < d.limit {
			d.raw = append(d.raw, x)
			return
		}
		d.overflow()
	}
	d.record(d.hist, x)
	// Reservoir sampling (Vitter's algorithm R): every sample so far is kept with equal chance.
	if j := d.rng.IntN(d.n); j < d.limit {
		d.raw[j] = x
	}
}

// overflow moves d from raw samples to the histogram and the reservoir.
func (d *Dist) overflow() {
	d.hist = newHDR()
	for _, v := range d.raw {
		d.record(d.hist, v)
	}
	d.rng = rand.New(rand.NewPCG(uint64(d.limit), 0x1f2e3d4c))
}

// N returns the number of samples added.
func (d *Dist) N() int { return d.n }

// Samples returns the raw samples held: all of them, or a uniform reservoir once the limit was
// passed. The slice is shared; do not modify it.
func (d *Dist) Samples() []float64 { return d.raw }

// Exact reports whether every sample is held.
func (d *Dist) Exact() bool { return d.hist == nil }

// Merge adds all of o's samples to d. Merging histograms is exact; the reservoir of the result
// is a uniform sample of both when either side had overflowed.
func (d *Dist) Merge(o *Dist) {
	if o == nil || o.n == 0 {
		return
	}
	if o.hist == nil {
		for _, x := range o.raw {
			d.Add(x)
		}
		return
	}
	// o overflowed: fold its raw reservoir in as samples for the reservoir, then replace the
	// histogram contribution with o's exact histogram.
	if d.hist == nil {
		d.overflow()
	}
	d.hist.Merge(o.hist)
	total := d.n + o.n
	d.merge(o.moments)
	// Reservoir: take from o in proportion to its share of the total.
	for _, x := range o.raw {
		if j := d.rng.IntN(total); j < d.limit {
			if len(d.raw) < d.limit {
				d.raw = append(d.raw, x)
			} else {
				d.raw[j%len(d.raw)] = x
			}
		}
	}
}

// Summary summarises every sample added. While all samples are held it is exact; afterwards the
// count, mean, std, min and max stay exact and the percentiles come from the histogram.
func (d *Dist) Summary() (Summary, error) {
	if d.n == 0 {
		return Summary{}, ErrNoSamples
	}
	if d.hist == nil {
		return Summarize(d.raw)
	}
	return histSummary(d.hist, d.moments, ": more samples than held raw"), nil
}
