package stats

import (
	"math"
	"sort"
)

// BenjaminiHochberg returns the BH-adjusted p-values (q-values) of ps, in the same order: a test
// is a discovery at false discovery rate α when its adjusted p-value is at most α. Under
// independence or positive dependence (PRDS) of the tests, the expected share of false
// discoveries among all discoveries is at most α. NaN p-values are treated as 1.
func BenjaminiHochberg(ps []float64) []float64 {
	n := len(ps)
	adj := make([]float64, n)
	p, idx := ranked(ps)
	run := 1.0
	for k := n - 1; k >= 0; k-- {
		i := idx[k]
		run = math.Min(run, p(i)*float64(n)/float64(k+1))
		adj[i] = math.Max(run, p(i)) // never below p, even after rounding
	}
	return adj
}

// holmAdjust returns Holm-Bonferroni adjusted p-values of ps, in the same order. It controls the
// family-wise error rate (the chance of any false discovery) under any dependence, at the cost of
// power when many tests are made.
func holmAdjust(ps []float64) []float64 {
	n := len(ps)
	adj := make([]float64, n)
	p, idx := ranked(ps)
	run := 0.0
	for k, i := range idx {
		run = math.Max(run, math.Min(1, p(i)*float64(n-k)))
		adj[i] = run
	}
	return adj
}

// ranked returns the p-value of test i (NaN read as 1) and the test indexes in increasing order
// of p-value, ties in their original order.
func ranked(ps []float64) (p func(i int) float64, idx []int) {
	p = func(i int) float64 {
		if math.IsNaN(ps[i]) {
			return 1
		}
		return ps[i]
	}
	idx = make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p(idx[a]) < p(idx[b]) })
	return p, idx
}
