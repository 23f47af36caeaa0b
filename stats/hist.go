package stats

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram is a full-resolution, mergeable record of one metric: an HDR histogram at the
// resolution Dist uses (micro-units, three significant digits) with the exact count, mean,
// variance, minimum and maximum beside it. Histograms of the same metric from several load agents
// merge exactly: Merge adds bucket counts, so the merged histogram equals, bucket for bucket, the
// histogram of the union of the samples, and its percentiles are those of the union (never an
// average of percentiles).
//
// It encodes to JSON with the histogram in the standard HdrHistogram V2 compressed format
// (base64), readable by any HdrHistogram implementation. The zero value is not usable; call
// NewHistogram. A Histogram is not safe for concurrent use.
type Histogram struct {
	h *hdrhistogram.Histogram
	moments
}

// NewHistogram returns an empty Histogram.
func NewHistogram() *Histogram {
	return &Histogram{h: newHDR(), moments: newMoments()}
}

func newHDR() *hdrhistogram.Histogram { return hdrhistogram.New(1, int64(histHighest), histDigits) }

// Add records one sample.
func (g *Histogram) Add(x float64) {
	g.add(x)
	g.record(g.h, x)
}

// moments are what a histogram keeps exactly beside its buckets: count, mean, the sum of squared
// deviations (Welford), minimum, maximum, and how many samples were clamped into its range. Dist
// and Histogram share them.
type moments struct {
	n       int
	mean    float64
	m2      float64
	lo, hi  float64
	clamped int
}

func newMoments() moments { return moments{lo: math.Inf(1), hi: math.Inf(-1)} }

// add counts one sample (Welford's update).
func (m *moments) add(x float64) {
	m.n++
	delta := x - m.mean
	m.mean += delta / float64(m.n)
	m.m2 += delta * (x - m.mean)
	m.lo = min(m.lo, x)
	m.hi = max(m.hi, x)
}

// record puts x into h, clamped into its range, and counts it when it was clamped.
func (m *moments) record(h *hdrhistogram.Histogram, x float64) {
	v, clamped := histValue(x)
	if clamped {
		m.clamped++
	}
	_ = h.RecordValue(v)
}

// merge adds o's samples: count, mean, variance, minimum and maximum combine exactly (Chan et
// al.'s parallel variance).
func (m *moments) merge(o moments) {
	total := m.n + o.n
	delta := o.mean - m.mean
	m.m2 += o.m2 + delta*delta*float64(m.n)*float64(o.n)/float64(total)
	m.mean += delta * float64(o.n) / float64(total)
	m.lo = min(m.lo, o.lo)
	m.hi = max(m.hi, o.hi)
	m.n = total
	m.clamped += o.clamped
}

// histValue converts a sample to the histogram's integer unit, clamped into its range.
func histValue(x float64) (int64, bool) {
	v := int64(math.Round(x * histScale))
	switch {
	case v < 1:
		return 1, true
	case v > int64(histHighest):
		return int64(histHighest), true
	}
	return v, false
}

// N returns the number of samples recorded.
func (g *Histogram) N() int { return g.n }

// Merge adds o's samples to g: bucket counts are added; count, mean, variance, minimum and
// maximum combine exactly (Chan et al.'s parallel variance).
func (g *Histogram) Merge(o *Histogram) {
	if o == nil || o.n == 0 {
		return
	}
	g.h.Merge(o.h)
	g.merge(o.moments)
}

// Bucket is one non-empty bucket: the samples between From and To (in the metric's unit) and
// how many there were.
type Bucket struct {
	From, To float64
	Count    int64
}

// Buckets returns the non-empty buckets in increasing order.
func (g *Histogram) Buckets() []Bucket {
	var out []Bucket
	for _, b := range g.h.Distribution() {
		if b.Count > 0 {
			out = append(out, Bucket{From: float64(b.From) / histScale, To: float64(b.To) / histScale, Count: b.Count})
		}
	}
	return out
}

// Quantile returns the q-quantile (0..1) to the histogram's resolution.
func (g *Histogram) Quantile(q float64) float64 {
	return float64(g.h.ValueAtPercentile(100*q)) / histScale
}

// Summary summarises the recorded samples: count, mean, std, min and max exact, percentiles from
// the buckets.
func (g *Histogram) Summary() (Summary, error) {
	if g.n == 0 {
		return Summary{}, ErrNoSamples
	}
	return histSummary(g.h, g.moments, ""), nil
}

// histSummary is the summary of an HDR histogram with exact moments beside it.
func histSummary(h *hdrhistogram.Histogram, m moments, why string) Summary {
	n, mean, lo, hi := m.n, m.mean, m.lo, m.hi
	q := func(p float64) float64 { return float64(h.ValueAtPercentile(p)) / histScale }
	s := Summary{
		N: n, Mean: mean, Min: lo, Max: hi,
		Median: q(50), P25: q(25), P75: q(75), P90: q(90), P95: q(95), P99: q(99),
		Approximate: true,
	}
	if n > 1 {
		s.Std = math.Sqrt(m.m2 / float64(n-1))
	}
	if s.Mean != 0 {
		s.CV = s.Std / math.Abs(s.Mean)
	}
	if n >= 1000 {
		v := q(99.9)
		s.P999 = &v
	}
	if lo, hi, ok := medianCI(n, 0.95); ok {
		loP, hiP := 100*float64(lo)/float64(n-1), 100*float64(hi)/float64(n-1)
		s.MedianCI = &Interval{Lo: q(loP), Hi: q(hiP), Confidence: 0.95}
	}
	iqr := s.P75 - s.P25
	s.Outliers = int(h.TotalCount())
	fenceLo, fenceHi := s.P25-1.5*iqr, s.P75+1.5*iqr
	for _, b := range h.Distribution() {
		mid := float64(b.From+b.To) / 2 / histScale
		if mid >= fenceLo && mid <= fenceHi {
			s.Outliers -= int(b.Count)
		}
	}
	s.Warnings = append(s.Warnings, "percentiles from an HDR histogram (3 significant digits)"+why)
	if m.clamped > 0 {
		s.Warnings = append(s.Warnings, "some samples were outside the histogram's range and were clamped")
	}
	return s
}

// histJSON is the encoded form of a Histogram.
type histJSON struct {
	N       int     `json:"n"`
	Mean    float64 `json:"mean"`
	M2      float64 `json:"m2"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Clamped int     `json:"clamped,omitempty"`
	// Scale is the histogram's integer units per unit of the metric.
	Scale float64 `json:"scale"`
	// HDR is the HdrHistogram V2 compressed encoding.
	HDR []byte `json:"hdr"`
}

// MarshalJSON implements json.Marshaler.
func (g *Histogram) MarshalJSON() ([]byte, error) {
	enc, err := g.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, fmt.Errorf("encode histogram: %w", err)
	}
	j := histJSON{N: g.n, Mean: g.mean, M2: g.m2, Clamped: g.clamped, Scale: histScale, HDR: enc}
	if g.n > 0 {
		j.Min, j.Max = g.lo, g.hi
	}
	return json.Marshal(j)
}

// maxEncodedHistogram bounds the compressed size accepted by UnmarshalJSON.
const maxEncodedHistogram = 4 << 20

// UnmarshalJSON implements json.Unmarshaler. It rejects histograms of another resolution and
// counts that disagree with n.
func (g *Histogram) UnmarshalJSON(data []byte) error {
	var j histJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	if j.Scale != histScale {
		return fmt.Errorf("histogram: scale %v, want %v", j.Scale, float64(histScale))
	}
	if len(j.HDR) == 0 || len(j.HDR) > maxEncodedHistogram {
		return errors.New("histogram: missing or oversized hdr encoding")
	}
	h, err := hdrhistogram.Decode(j.HDR)
	if err != nil {
		return fmt.Errorf("histogram: %w", err)
	}
	if h.LowestTrackableValue() != 1 || h.HighestTrackableValue() != int64(histHighest) || h.SignificantFigures() != histDigits {
		return errors.New("histogram: geometry differs from inferbench's (1 to 1e15, 3 digits)")
	}
	if h.TotalCount() != int64(j.N) || j.N < 0 {
		return fmt.Errorf("histogram: buckets hold %d samples, n says %d", h.TotalCount(), j.N)
	}
	*g = Histogram{h: h, moments: moments{n: j.N, mean: j.Mean, m2: j.M2, lo: j.Min, hi: j.Max, clamped: j.Clamped}}
	if j.N == 0 {
		g.lo, g.hi = math.Inf(1), math.Inf(-1)
	}
	return nil
}
