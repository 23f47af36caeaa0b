package stats

import (
	"slices"

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
func MannWhitney(old, new []float64, alpha float64) Test {
	if alpha <= 0 {
		alpha = DefaultAlpha
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
