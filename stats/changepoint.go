package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
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
	// P is the p-value of the shift: the chance that a series without one, as long as the two
	// segments together, shows a split at least as strong somewhere (see ChangePoints).
	P float64 `json:"p"`
}

// ChangeOptions configure ChangePoints. Zero fields take the defaults.
type ChangeOptions struct {
	// MaxP is the p-value below which a shift is accepted (default DefaultChangeP, 0.05): the
	// false-alarm rate of a series without a shift.
	MaxP float64
	// MinMagnitude drops change points whose relative magnitude is smaller (default 0).
	MinMagnitude float64
	// MinSize is the fewest points a segment may have (default 3).
	MinSize int
}

// DefaultChangeP is ChangeOptions.MaxP's default. On A/A series of normal noise it is the
// false-alarm rate per series; docs/history.md gives the rates measured by TestChangePointRates.
const DefaultChangeP = 0.05

// nullDraws is the number of simulated shift-free series that calibrate a segment length.
const nullDraws = 4000

// ChangePoints finds shifts in the mean of a series by binary segmentation with a max-t
// statistic: in a segment, every split leaving MinSize points on each side is scored with the
// two-sample t statistic (pooled variance), and the best split's score is compared with the best
// scores of simulated segments of the same length without a shift (normal noise, nullDraws of
// them, seeded by the length: deterministic). That is the likelihood-ratio test of one mean shift
// at an unknown position, calibrated exactly for its length instead of treating the chosen split
// as if it had been fixed in advance (a t-test of the best split, as Apache Otava does after
// E-divisive, is anti-conservative on short series and, at its p < 0.001, blind to a 15% step
// in ten runs with 5% noise). The segment with the most significant split is cut while its p is
// below MaxP; then each change point is tested again on the segment between its final
// neighbours, and the weakest failing one is dropped until all pass.
//
// The statistic is location and scale free, so the calibration holds for any level and noise;
// it assumes roughly normal, independent points (a series of medians is), and heavy-tailed
// series (a run with an outlier) alarm more often than MaxP.
func ChangePoints(xs []float64, o ChangeOptions) []ChangePoint {
	if o.MaxP <= 0 {
		o.MaxP = DefaultChangeP
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
			tau, p, ok := splitTest(xs[a:b], o.MinSize)
			if ok && p < bestP {
				best, bestP = a+tau, p
			}
		}
		if best < 0 || bestP >= o.MaxP {
			break
		}
		cuts = append(cuts, best)
		slices.Sort(cuts)
	}
	// Merge pass: re-test every change point on the segment between its final neighbours, and drop
	// the weakest failing one until all pass.
	for {
		cps := describe(xs, cuts, o.MinSize)
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

func describe(xs []float64, cuts []int, minSize int) []ChangePoint {
	var out []ChangePoint
	for i := 1; i+1 < len(cuts); i++ {
		a, c, b := cuts[i-1], cuts[i], cuts[i+1]
		before, after := mean(xs[a:c]), mean(xs[c:b])
		mag := math.Inf(1)
		if before != 0 {
			mag = (after - before) / math.Abs(before)
		}
		t := splitT(xs[a:b], c-a)
		out = append(out, ChangePoint{Index: c, Before: before, After: after, Magnitude: mag, P: nullP(b-a, minSize, t)})
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

// splitTest returns the best split of xs (by the t statistic) and its calibrated p-value.
func splitTest(xs []float64, minSize int) (tau int, p float64, ok bool) {
	t, tau := maxT(xs, minSize)
	if tau == 0 {
		return 0, 1, false
	}
	return tau, nullP(len(xs), minSize, t), true
}

// maxT returns the largest two-sample t statistic |mean(left) - mean(right)| / (s_pooled ·
// sqrt(1/nl + 1/nr)) over the splits of xs leaving minSize points on each side, and its split,
// in O(len(xs)) with running sums of the centred series. Two constant sides that differ score +Inf.
func maxT(xs []float64, minSize int) (float64, int) {
	n := len(xs)
	if n < 2*minSize {
		return -1, 0
	}
	m := mean(xs)
	var tot, tot2 float64
	for _, x := range xs {
		d := x - m
		tot += d
		tot2 += d * d
	}
	scale := tot2 / float64(n)
	best, bestTau := -1.0, 0
	var s, s2 float64
	for tau := 1; tau <= n-minSize; tau++ {
		d := xs[tau-1] - m
		s += d
		s2 += d * d
		if tau < minSize {
			continue
		}
		nl, nr := float64(tau), float64(n-tau)
		ml, mr := s/nl, (tot-s)/nr
		ss := (s2 - nl*ml*ml) + (tot2 - s2 - nr*mr*mr)
		var t float64
		switch {
		case ss > 1e-12*scale*float64(n) && ss > 0:
			t = math.Abs(ml-mr) / math.Sqrt(ss/(nl+nr-2)*(1/nl+1/nr))
		case scale > 0: // both sides constant, and they differ
			t = math.Inf(1)
		}
		if t > best {
			best, bestTau = t, tau
		}
	}
	return best, bestTau
}

// splitT is the two-sample t statistic of xs split at tau.
func splitT(xs []float64, tau int) float64 {
	l, r := xs[:tau], xs[tau:]
	ml, mr := mean(l), mean(r)
	ss := 0.0
	for _, x := range l {
		ss += (x - ml) * (x - ml)
	}
	for _, x := range r {
		ss += (x - mr) * (x - mr)
	}
	nl, nr := float64(len(l)), float64(len(r))
	d := math.Abs(ml - mr)
	sp := ss / (nl + nr - 2)
	if sp <= 1e-24*math.Max(ml*ml, mr*mr) {
		if d > 1e-12*math.Max(math.Abs(ml), math.Abs(mr)) {
			return math.Inf(1)
		}
		return 0
	}
	return d / math.Sqrt(sp*(1/nl+1/nr))
}

// nullP is the share of simulated shift-free series of length n whose max-t is at least t, with
// the observed series counted in ((1 + k) / (1 + draws)).
func nullP(n, minSize int, t float64) float64 {
	null := nullMaxT(nullLength(n), minSize)
	i, _ := slices.BinarySearch(null, t) // null is sorted: draws >= t are null[i:]
	return float64(1+len(null)-i) / float64(1+len(null))
}

// nullLength is the length whose simulated series calibrate a segment of n points: n itself up
// to 200, above that the next point of a grid 5% apart (at least n: a longer series offers more
// splits, so its null is slightly wider and the test slightly conservative). The max-t null
// grows only like sqrt(log log n), and the grid bounds what is simulated and kept: about 170
// lengths up to a million points.
func nullLength(n int) int {
	if n <= 200 {
		return n
	}
	m := 200.0
	for int(math.Ceil(m)) < n {
		m *= 1.05
	}
	return int(math.Ceil(m))
}

var nullCache sync.Map // [2]int{n, minSize} → sorted []float64

// nullMaxT returns the sorted max-t statistics of nullDraws series of n standard normal points,
// seeded by n and minSize.
func nullMaxT(n, minSize int) []float64 {
	key := [2]int{n, minSize}
	if v, ok := nullCache.Load(key); ok {
		return v.([]float64)
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(minSize)))
	out := make([]float64, nullDraws)
	xs := make([]float64, n)
	for d := range out {
		for i := range xs {
			xs[i] = rng.NormFloat64()
		}
		out[d], _ = maxT(xs, minSize)
	}
	slices.Sort(out)
	v, _ := nullCache.LoadOrStore(key, out)
	return v.([]float64)
}
