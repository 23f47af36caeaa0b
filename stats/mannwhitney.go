package stats

import (
	"slices"
	"sync"

	mstats "github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// DefaultAlpha is the significance level of comparisons, as benchstat's.
const DefaultAlpha = 0.05

// Test is the outcome of a two-sample test.
type Test struct {
	P        float64  // p-value of the null hypothesis "same distribution"
	N1, N2   int      // sample sizes
	Method   string   // "mann-whitney-u", "bootstrap"
	Warnings []string // e.g. too few samples to ever reach significance
}

// MannWhitney tests whether old and new come from distributions with the same location, with
// the Mann-Whitney U test exactly as benchstat does it (golang.org/x/perf/benchmath, assuming
// nothing about the distribution). The samples are not modified.
//
// Note: benchmath computes the exact null distribution of U for every call, which costs ~160 µs
// and 100 kB at n = 30. Without ties that distribution depends only on the sample sizes, so the
// common case computes U here and memoises its CDF per (n1, n2, U) through the same code
// (go-moremath's UDist): the p-values are bit-for-bit benchmath's (a test checks it). Ties, large
// samples and the small-sample warnings go through benchmath itself.
func MannWhitney(old, new []float64, alpha float64) Test {
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	if p, ok := fastU(old, new); ok && (p <= alpha || min(len(old), len(new)) >= 10) {
		return Test{P: p, N1: len(old), N2: len(new), Method: "mann-whitney-u"}
	}
	th := &benchmath.Thresholds{CompareAlpha: alpha}
	s1 := benchmath.NewSample(slices.Clone(old), th)
	s2 := benchmath.NewSample(slices.Clone(new), th)
	c := benchmath.AssumeNothing.Compare(s1, s2)
	t := Test{P: c.P, N1: c.N1, N2: c.N2, Method: "mann-whitney-u"}
	for _, w := range c.Warnings {
		t.Warnings = append(t.Warnings, w.Error())
	}
	return t
}

type uKey struct{ n1, n2, u int }

var (
	uMu    sync.RWMutex
	uCache = map[uKey]float64{}
)

// fastU is go-moremath's two-sided MannWhitneyUTest for samples without ties within its exact
// limit, with the CDF memoised; ok is false for any other case.
func fastU(x1, x2 []float64) (float64, bool) {
	n1, n2 := len(x1), len(x2)
	if n1 == 0 || n2 == 0 || n1 > mstats.MannWhitneyExactLimit || n2 > mstats.MannWhitneyExactLimit {
		return 0, false
	}
	a, b := slices.Clone(x1), slices.Clone(x2)
	slices.Sort(a)
	slices.Sort(b)
	// Merge, ranking a's values; any equal pair means ties: leave it to benchmath.
	r1, i, j, rank := 0, 0, 0, 0
	for i < n1 || j < n2 {
		rank++
		switch {
		case j == n2 || (i < n1 && a[i] < b[j]):
			r1 += rank
			i++
		case i == n1 || b[j] < a[i]:
			j++
		default:
			return 0, false
		}
		if (i > 0 && i < n1 && a[i] == a[i-1]) || (j > 0 && j < n2 && b[j] == b[j-1]) {
			return 0, false
		}
	}
	u1 := r1 - n1*(n1+1)/2
	u2 := n1*n2 - u1
	if u1 == u2 {
		return 1, true
	}
	k := uKey{n1, n2, min(u1, u2)}
	uMu.RLock()
	cdf, ok := uCache[k]
	uMu.RUnlock()
	if !ok {
		t := make([]int, n1+n2)
		for i := range t {
			t[i] = 1
		}
		cdf = mstats.UDist{N1: n1, N2: n2, T: t}.CDF(float64(k.u))
		uMu.Lock()
		uCache[k] = cdf
		uMu.Unlock()
	}
	return cdf * 2, true
}

// MedianInterval is benchstat's summary of a sample: its median and the distribution-free
// confidence interval around it.
func MedianInterval(xs []float64, confidence float64) (center float64, ci Interval, warnings []string) {
	s := benchmath.NewSample(slices.Clone(xs), &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(s, confidence)
	for _, w := range sum.Warnings {
		warnings = append(warnings, w.Error())
	}
	return sum.Center, Interval{Lo: sum.Lo, Hi: sum.Hi, Confidence: sum.Confidence}, warnings
}
