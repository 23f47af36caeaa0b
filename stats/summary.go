package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Summary describes the distribution of one metric in one scenario.
type Summary struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Std    float64 `json:"std"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Median float64 `json:"median"`
	P25    float64 `json:"p25"`
	P75    float64 `json:"p75"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	// P999 is the 99.9th percentile, reported only when N >= 1000.
	P999 *float64 `json:"p99_9,omitempty"`
	// CV is the coefficient of variation, Std / Mean (0 when Mean is 0).
	CV float64 `json:"cv"`
	// MedianCI is the 95% confidence interval of the median; nil when N is too small (< 6).
	MedianCI *Interval `json:"median_ci,omitempty"`
	// Outliers counts samples beyond Tukey's fences (1.5 IQR outside the quartiles).
	Outliers int `json:"outliers"`
	// Approximate is true when percentiles come from a histogram rather than every raw sample.
	Approximate bool `json:"approximate,omitempty"`
	// Warnings are statistical caveats that travel with the figures.
	Warnings []string `json:"warnings,omitempty"`
}

// Interval is a closed interval [Lo, Hi] at a confidence level.
type Interval struct {
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
}

// ErrNoSamples is returned when a summary is asked of an empty sample.
var ErrNoSamples = errors.New("no samples")

// minSamplesForCI is the smallest sample whose median has a 95% distribution-free interval.
const minSamplesForCI = 6

// Summarize computes the summary of xs. It does not modify xs.
func Summarize(xs []float64) (Summary, error) {
	if len(xs) == 0 {
		return Summary{}, ErrNoSamples
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	return summarizeSorted(sorted), nil
}

func summarizeSorted(s []float64) Summary {
	n := len(s)
	mean, m2 := 0.0, 0.0
	for i, x := range s { // Welford: stable for large n
		d := x - mean
		mean += d / float64(i+1)
		m2 += d * (x - mean)
	}
	std := 0.0
	if n > 1 {
		std = math.Sqrt(m2 / float64(n-1))
	}
	sum := Summary{
		N: n, Mean: mean, Std: std, Min: s[0], Max: s[n-1],
		Median: Quantile(s, 0.5),
		P25:    Quantile(s, 0.25), P75: Quantile(s, 0.75),
		P90: Quantile(s, 0.90), P95: Quantile(s, 0.95), P99: Quantile(s, 0.99),
	}
	if n >= 1000 {
		v := Quantile(s, 0.999)
		sum.P999 = &v
	}
	if mean != 0 {
		sum.CV = std / math.Abs(mean)
	}
	if lo, hi, ok := medianCI(n, 0.95); ok {
		sum.MedianCI = &Interval{Lo: s[lo], Hi: s[hi], Confidence: 0.95}
	} else {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("%d samples: need at least %d for a 95%% confidence interval of the median", n, minSamplesForCI))
	}
	iqr := sum.P75 - sum.P25
	loFence, hiFence := sum.P25-1.5*iqr, sum.P75+1.5*iqr
	for _, x := range s {
		if x < loFence || x > hiFence {
			sum.Outliers++
		}
	}
	return sum
}

// Quantile returns the q-quantile (0 <= q <= 1) of a sorted sample by linear interpolation
// between closest ranks (type 7). It panics on an empty sample.
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 1 {
		return sorted[0]
	}
	h := q * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// medianCI returns the 0-based ranks (lo, hi) of the order statistics that bound the median of a
// sample of n with at least the given confidence, and false when n is too small for it. It uses
// the exact binomial distribution up to n = 1000 and the normal approximation above.
func medianCI(n int, confidence float64) (lo, hi int, ok bool) {
	if n < 2 {
		return 0, 0, false
	}
	alpha := 1 - confidence
	if n > 1000 {
		z := normalQuantile(1 - alpha/2)
		half := z * math.Sqrt(float64(n)) / 2
		lo = int(math.Floor(float64(n)/2 - half))
		hi = int(math.Ceil(float64(n)/2+half)) - 1
		return max(lo, 0), min(hi, n-1), true
	}
	// Find the largest k such that P(X < k) <= alpha/2 for X ~ Binomial(n, 1/2); then the
	// interval [x_(k), x_(n-k-1)] (0-based) covers the median with probability >= confidence.
	cdf := 0.0
	k := -1
	for i := 0; i < n/2; i++ {
		cdf += binomPMF(n, i)
		if cdf > alpha/2 {
			break
		}
		k = i
	}
	if k < 0 {
		return 0, 0, false
	}
	// P(X <= k) <= alpha/2, so [x_(k), x_(n-1-k)] has coverage >= 1 - alpha.
	return k, n - 1 - k, true
}

func binomPMF(n, k int) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	return math.Exp(lg(n) - lg(k) - lg(n-k) - float64(n)*math.Ln2)
}

// normalQuantile is the inverse of the standard normal CDF.
func normalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}
