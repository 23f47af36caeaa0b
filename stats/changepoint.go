package stats

import (
	"math"
	"slices"

	mstats "github.com/aclements/go-moremath/stats"
)

// ChangePoint is a detected shift in a series.
type ChangePoint struct {
	// Index is the position of the first point after the shift.
	Index int `json:"index"`
	// Before and After are the means of the segments on either side (bounded by the neighbouring
	// change points).
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	// Magnitude is the relative change of the mean, (After - Before) / |Before|.
	Magnitude float64 `json:"magnitude"`
	// P is the p-value of Welch's t-test between the two segments.
	P float64 `json:"p"`
}

// ChangeOptions configure ChangePoints. Zero fields take Apache Otava's defaults.
type ChangeOptions struct {
	// MaxP is the p-value below which a candidate is accepted (default 0.001).
	MaxP float64
	// MinMagnitude drops change points whose relative magnitude is smaller (default 0).
	MinMagnitude float64
	// MinSize is the fewest points a segment may have (default 3).
	MinSize int
}

// ChangePoints finds shifts in the mean of a series with E-divisive means (Matteson and James,
// 2014) and a Student's t-test for significance in place of the permutation test, as Apache
// Otava (formerly Hunter) does: repeatedly split the segment whose best E-divisive candidate is
// most significant, while the t-test between the candidate's neighbouring segments gives p < MaxP;
// then drop, weakest first, any change point that no longer passes once its neighbours are
// known. It is deterministic: no random permutations.
func ChangePoints(xs []float64, o ChangeOptions) []ChangePoint {
	if o.MaxP <= 0 {
		o.MaxP = 0.001
	}
	if o.MinSize < 2 {
		o.MinSize = 3
	}
	n := len(xs)
	if n < 2*o.MinSize {
		return nil
	}
	cuts := []int{0, n} // segment bounds, sorted
	for {
		best, bestP := -1, math.Inf(1)
		for i := 0; i+1 < len(cuts); i++ {
			a, b := cuts[i], cuts[i+1]
			tau, ok := edivisive(xs[a:b], o.MinSize)
			if !ok {
				continue
			}
			tau += a
			p := tTest(xs[a:tau], xs[tau:b])
			if p < bestP {
				best, bestP = tau, p
			}
		}
		if best < 0 || bestP >= o.MaxP {
			break
		}
		cuts = append(cuts, best)
		slices.Sort(cuts)
	}
	// Merge pass: re-test every change point against its final neighbours and drop the weakest
	// failing one until all pass.
	for {
		cps := describe(xs, cuts)
		worst, worstP := -1, -1.0
		for i, cp := range cps {
			fails := cp.P >= o.MaxP || math.Abs(cp.Magnitude) < o.MinMagnitude
			if fails && cp.P > worstP {
				worst, worstP = i, cp.P
			}
		}
		if worst < 0 {
			return cps
		}
		cuts = slices.Delete(cuts, worst+1, worst+2)
	}
}

func describe(xs []float64, cuts []int) []ChangePoint {
	var out []ChangePoint
	for i := 1; i+1 < len(cuts); i++ {
		l, r := xs[cuts[i-1]:cuts[i]], xs[cuts[i]:cuts[i+1]]
		before, after := mean(l), mean(r)
		mag := math.Inf(1)
		if before != 0 {
			mag = (after - before) / math.Abs(before)
		}
		out = append(out, ChangePoint{Index: cuts[i], Before: before, After: after, Magnitude: mag, P: tTest(l, r)})
	}
	return out
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// tTest is Welch's two-sided t-test; two constant segments give 0 when they differ, 1 when not.
func tTest(a, b []float64) float64 {
	if len(a) < 2 || len(b) < 2 {
		return 1
	}
	r, err := mstats.TwoSampleWelchTTest(mstats.Sample{Xs: a}, mstats.Sample{Xs: b}, mstats.LocationDiffers)
	if err != nil || math.IsNaN(r.P) {
		if mean(a) != mean(b) {
			return 0
		}
		return 1
	}
	return r.P
}

// edivisive returns the split τ of xs (both sides at least minSize long) that maximises the
// E-divisive statistic Q(τ) = nm/(n+m) · (2/(nm) Σ|x−y| − Σ|x−x'|/C(n,2) − Σ|y−y'|/C(m,2)),
// with α = 1, in O(len(xs)²) time and O(1) extra memory.
func edivisive(xs []float64, minSize int) (int, bool) {
	n := len(xs)
	if n < 2*minSize {
		return 0, false
	}
	// total within-segment distance sum, then move points from right to left.
	total := 0.0
	for i := 0; i < n; i++ {
		for k := i + 1; k < n; k++ {
			total += math.Abs(xs[i] - xs[k])
		}
	}
	left, right := 0.0, total
	best, bestQ := 0, math.Inf(-1)
	for tau := 1; tau < n; tau++ {
		// move xs[tau-1] from the right segment to the left one
		x := xs[tau-1]
		toLeft, toRight := 0.0, 0.0
		for i := 0; i < tau-1; i++ {
			toLeft += math.Abs(x - xs[i])
		}
		for k := tau; k < n; k++ {
			toRight += math.Abs(x - xs[k])
		}
		left += toLeft
		right -= toRight
		if tau < minSize || n-tau < minSize {
			continue
		}
		cross := total - left - right
		nl, nr := float64(tau), float64(n-tau)
		e := 2*cross/(nl*nr) - left/(nl*(nl-1)/2) - right/(nr*(nr-1)/2)
		q := nl * nr / (nl + nr) * e
		if q > bestQ {
			best, bestQ = tau, q
		}
	}
	return best, best > 0
}
