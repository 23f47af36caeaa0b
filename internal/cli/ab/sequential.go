package ab

import (
	"fmt"
	"math"
	"slices"

	mstats "github.com/aclements/go-moremath/stats"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/result"
)

// This file holds the sequential verdict: after MinPairs pairs, and again each time the pairs
// grow by half, the interval of the ratio is looked at, and the A/B stops as soon as it
// lies wholly on one side of the threshold: slower (wholly beyond it: a regression) or not
// slower (wholly within it: the same, or faster). When the pairs or the time run out first, the
// answer is unknown, with the smallest slowdown the pairs measured could have shown.
//
// The statistic is robust to a pair that straddles a change of the machine's speed (this VM
// runs the same Python work at about 57 or about 98 ms, switching every few seconds): the
// Hodges-Lehmann shift of the pairs' log ratios with its Wilcoxon signed-rank interval, in which
// one wild pair moves one rank, not the mean.
//
// The repeated looks are accounted for: each end of a look's interval is wrong at most Alpha/K
// of the time (confidence 1 - 2 Alpha/K), K the number of looks the schedule allows, so that
// across all the looks the A/B calls unchanged code slower with probability at most Alpha
// (Bonferroni's bound, which holds whatever the looks find, and for fewer looks when the time
// runs out first); a slowdown beyond the threshold is called the same at most as often.

// Answers of a sequential A/B.
const (
	AnswerSlower  = "slower"  // B is worse than A by more than the threshold: a regression
	AnswerSame    = "same"    // B is within the threshold of A
	AnswerFaster  = "faster"  // B is better than A by more than the threshold
	AnswerUnknown = "unknown" // the pairs or the time ran out before the interval said either
	// AnswerChanged is a change of a metric with no better direction: B differs from A.
	AnswerChanged = "changed"
)

// looks is the schedule of the looks: min pairs, then half as many again each time, up to max.
// Fewer looks keep each one's interval narrower (a Bonferroni share of Alpha each).
func looks(minPairs, maxPairs int) []int {
	if maxPairs < minPairs {
		maxPairs = minPairs
	}
	var out []int
	for n := minPairs; n < maxPairs; n = max(n+1, int(math.Ceil(float64(n)*1.5))) {
		out = append(out, n)
	}
	return append(out, maxPairs)
}

// shift is the Hodges-Lehmann estimate of the center of xs (the median of the Walsh averages
// (x_i + x_j)/2, i <= j) and its Wilcoxon signed-rank interval of confidence 1 - alpha (the
// signed-rank statistic's exact distribution for up to exactRanks values, its normal
// approximation beyond). The interval is infinite when xs are too few for that confidence.
func shift(xs []float64, alpha float64) (est, lo, hi float64) {
	n := len(xs)
	if n == 0 {
		return math.NaN(), math.Inf(-1), math.Inf(1)
	}
	walsh := make([]float64, 0, n*(n+1)/2)
	for i := range xs {
		for j := i; j < n; j++ {
			walsh = append(walsh, (xs[i]+xs[j])/2)
		}
	}
	slices.Sort(walsh)
	N := len(walsh)
	if N%2 == 1 {
		est = walsh[N/2]
	} else {
		est = (walsh[N/2-1] + walsh[N/2]) / 2
	}
	k := criticalRank(n, alpha) // 1-based rank of the lower bound
	if k < 1 {
		return est, math.Inf(-1), math.Inf(1)
	}
	return est, walsh[k-1], walsh[N-k]
}

// exactRanks is the number of values up to which criticalRank uses the signed-rank statistic's
// exact distribution.
const exactRanks = 400

// criticalRank is the largest c with P(W+ <= c-1) <= alpha/2 under the null, W+ the signed-rank
// statistic of n values: the interval of the shift is the c-th Walsh average from each end.
func criticalRank(n int, alpha float64) int {
	if n > exactRanks {
		z := mstats.NormalDist{Mu: 0, Sigma: 1}.InvCDF(1 - alpha/2)
		nf := float64(n)
		sd := math.Sqrt(nf * (nf + 1) * (2*nf + 1) / 24)
		return int(math.Floor(nf*(nf+1)/4 - z*sd))
	}
	// p[w] = P(W+ = w), built value by value: the i-th rank is in W+ or not, each with 1/2.
	top := n * (n + 1) / 2
	p := make([]float64, top+1)
	p[0] = 1
	hi := 0
	for i := 1; i <= n; i++ {
		hi += i
		for w := hi; w >= i; w-- {
			p[w] = (p[w] + p[w-i]) / 2
		}
		for w := i - 1; w >= 0; w-- {
			p[w] /= 2
		}
	}
	cum := 0.0
	for c := 0; c <= top; c++ {
		cum += p[c] // P(W+ <= c)
		if cum > alpha/2 {
			return c // P(W+ <= c-1) <= alpha/2 < P(W+ <= c)
		}
	}
	return top
}

// signedRankP is the two-sided p-value of Wilcoxon's signed-rank test that xs center on zero
// (normal approximation, ties given their mean rank, zeros dropped).
func signedRankP(xs []float64) float64 {
	var abs []float64
	var pos []bool
	for _, x := range xs {
		if x != 0 && !math.IsNaN(x) {
			abs = append(abs, math.Abs(x))
			pos = append(pos, x > 0)
		}
	}
	n := len(abs)
	if n == 0 {
		return 1
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case abs[a] < abs[b]:
			return -1
		case abs[a] > abs[b]:
			return 1
		}
		return 0
	})
	rank := make([]float64, n)
	for i := 0; i < n; {
		j := i
		for j+1 < n && abs[idx[j+1]] == abs[idx[i]] {
			j++
		}
		r := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			rank[idx[k]] = r
		}
		i = j + 1
	}
	wplus := 0.0
	for i, r := range rank {
		if pos[i] {
			wplus += r
		}
	}
	nf := float64(n)
	mu := nf * (nf + 1) / 4
	sd := math.Sqrt(nf * (nf + 1) * (2*nf + 1) / 24)
	if sd == 0 {
		return 1
	}
	z := math.Abs(wplus-mu) / sd
	return 2 * (1 - mstats.NormalDist{Mu: 0, Sigma: 1}.CDF(z))
}

// judge sets r's ratio, interval, p-value, answer and verdict from the pairs' log ratios B/A,
// each look's interval at confidence 1 - alpha/k. It reports whether the answer is decided.
func judge(r *Result, logs []float64, alpha float64, k int) bool {
	// Each end of the interval is wrong at most alpha/k of the time: a false "slower" needs its
	// lower end wrong at one of at most k looks.
	la := 2 * alpha / float64(max(1, k))
	est, lo, hi := shift(logs, la)
	r.Ratio = math.Exp(est)
	r.CI.Lo, r.CI.Hi, r.CI.Confidence = math.Exp(lo), math.Exp(hi), 1-la
	r.P = signedRankP(logs)
	r.Looks = k
	b := math.Log1p(r.Threshold / 100)
	// w is the interval in the worse direction: positive is worse.
	wlo, whi := lo, hi
	switch r.Better {
	case string(result.Higher):
		wlo, whi = -hi, -lo
	case string(result.Lower):
	default:
		// No direction: a change either way is a change, never a regression.
		switch {
		case lo > 0 || hi < 0:
			r.Answer, r.Verdict = AnswerChanged, compare.Changed
			return true
		case lo > -b && hi < b:
			r.Answer, r.Verdict = AnswerSame, compare.Unchanged
			return true
		}
		r.Answer, r.Verdict = AnswerUnknown, compare.Unchanged
		return false
	}
	// Resolvable: the smallest slowdown these pairs could have shown beyond the threshold.
	half := (whi - wlo) / 2
	if math.IsInf(half, 0) || math.IsNaN(half) {
		r.Resolvable = math.Inf(1)
	} else {
		r.Resolvable = 100 * math.Expm1(b+half)
	}
	switch {
	case wlo > b:
		r.Answer, r.Verdict = AnswerSlower, compare.Regression
		return true
	case whi < -b:
		r.Answer, r.Verdict = AnswerFaster, compare.Improvement
		return true
	case whi < b:
		r.Answer = AnswerSame
		switch {
		case wlo > 0:
			r.Verdict = compare.Worse
		case whi < 0:
			r.Verdict = compare.Better
		default:
			r.Verdict = compare.Unchanged
		}
		return true
	}
	r.Answer, r.Verdict = AnswerUnknown, compare.Unknown
	return false
}

// answerLine is the answer in words: "slower: B/A 1.112 [1.071, 1.160], beyond +3%".
// Too few pairs for an interval leave its upper end infinite: null in run.json, read back as 0.
func (r *Result) answerLine() string {
	ci := fmt.Sprintf("B/A %.4f [%.4f, %.4f]", r.Ratio, r.CI.Lo, r.CI.Hi)
	if math.IsInf(r.CI.Hi, 1) || !(r.CI.Hi > 0) {
		ci = fmt.Sprintf("B/A %.4f (no interval: too few pairs)", r.Ratio)
	}
	switch r.Answer {
	case AnswerSlower:
		return fmt.Sprintf("slower: %s lies beyond +%g%%", ci, r.Threshold)
	case AnswerFaster:
		return fmt.Sprintf("faster: %s lies beyond -%g%%", ci, r.Threshold)
	case AnswerSame:
		return fmt.Sprintf("same: %s lies within +%g%%", ci, r.Threshold)
	case AnswerUnknown:
		s := fmt.Sprintf("unknown: %s straddles +%g%% after %d pairs", ci, r.Threshold, r.Pairs)
		if r.Stopped != "" {
			s += " (" + r.Stopped + ")"
		}
		if !math.IsInf(r.Resolvable, 0) && r.Resolvable > 0 {
			s += fmt.Sprintf("; only a slowdown beyond about %+.1f%% could have been told apart here", r.Resolvable)
		}
		return s
	}
	return ci
}
