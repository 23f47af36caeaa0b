package monitor

import (
	"fmt"
	"math"

	"github.com/inferbench/inferbench/result"
)

// GrowthThreshold says when memory growth across a window is flagged. The rule judges the
// process in steady state: the second half of the window, after the warm-up of the first (caches,
// pools, the heap reaching its working size). Growth is flagged when the rise that half's fitted
// slope makes over the window is at least MinMB and at least MinFraction of its starting level, and
// the fit explains at least MinR2 of the variance (steady growth, not noise or one step). A window
// shorter than MinSeconds, or a half with fewer than MinPoints samples, is not judged.
type GrowthThreshold struct {
	MinMB       float64
	MinFraction float64
	MinR2       float64
	MinPoints   int
	MinSeconds  float64
}

// DefaultGrowthThreshold flags a steady rise of 10 MB and 5% or more over the measured window, in
// a window of 10 s or more.
var DefaultGrowthThreshold = GrowthThreshold{MinMB: 10, MinFraction: 0.05, MinR2: 0.6, MinPoints: 8, MinSeconds: 10}

// LeastSquares fits y = a + b·x and returns the intercept a, the slope b and r².
// With fewer than two distinct x it returns ok false.
func LeastSquares(x, y []float64) (a, b, r2 float64, ok bool) {
	n := len(x)
	if n != len(y) || n < 2 {
		return 0, 0, 0, false
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxx, sxy, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 {
		return 0, 0, 0, false
	}
	b = sxy / sxx
	a = my - b*mx
	if syy == 0 {
		r2 = 1 // a flat line fits exactly
	} else {
		r2 = sxy * sxy / (sxx * syy)
	}
	return a, b, r2, true
}

// Growth fits a line through a memory timeline (points in MB against seconds) over a window of
// the given length in which iterations measured iterations ran (0 when not counted), and judges
// it against th. The timeline's bucket means are fitted; downsampling keeps them evenly spaced.
//
// A window th can judge is fitted over its second half (steady state, GrowthThreshold); a shorter
// one is fitted whole, for the figures, and never flagged: its Reason says why.
//
// Note: the whole window used to be fitted. The warm-up of inferbench's own process in a short
// serving run (RSS 57 → 79 MB in 3.6 s, levelling off at 88 MB in a 20 s run) then read as a
// leak in 6 of 6 runs.
func Growth(tl result.Timeline, windowS float64, iterations int, th GrowthThreshold) result.Growth {
	r := result.Growth{N: len(tl.V)}
	if th.MinPoints < 2 {
		th.MinPoints = 2
	}
	if r.N < th.MinPoints {
		r.Reason = fmt.Sprintf("too few samples to judge (%d < %d)", r.N, th.MinPoints)
		return r
	}
	if windowS <= 0 {
		windowS = tl.T[len(tl.T)-1] - tl.T[0]
	}
	t, v := tl.T, tl.V
	judged := windowS >= th.MinSeconds
	if judged {
		half := tl.T[0] + (tl.T[len(tl.T)-1]-tl.T[0])/2
		i := 0
		for i < len(t) && t[i] < half {
			i++
		}
		if len(t)-i >= th.MinPoints {
			t, v = t[i:], v[i:]
		} else {
			judged = false
		}
	}
	a, b, r2, ok := LeastSquares(t, v)
	if !ok {
		r.Reason = "samples have no spread in time"
		return r
	}
	r.N = len(t)
	r.SlopeMBPerS, r.StartMB, r.R2 = b, a+b*t[0], r2
	r.RiseMB = b * windowS
	if iterations > 0 {
		r.PerIterMB = r.RiseMB / float64(iterations)
	}
	switch {
	case !judged:
		r.Reason = fmt.Sprintf("not judged: a window of %.1f s with %d samples is too short to tell a leak from warm-up (the rule needs %g s, and %d samples in its second half)",
			windowS, len(tl.V), th.MinSeconds, th.MinPoints)
	case r.RiseMB >= th.MinMB && r.RiseMB >= th.MinFraction*math.Abs(r.StartMB) && r2 >= th.MinR2:
		r.Flagged = true
		r.Reason = fmt.Sprintf("RSS rose %.1f MB over the window in steady state (its second half: %.3f MB/s, %.1f%% of %.0f MB, r²=%.2f)",
			r.RiseMB, b, 100*r.RiseMB/math.Max(math.Abs(r.StartMB), 1e-9), r.StartMB, r2)
		if r.PerIterMB > 0 {
			r.Reason += fmt.Sprintf(", %.3f MB per iteration", r.PerIterMB)
		}
	}
	return r
}
