package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Bootstrap configures resampling. The zero value uses 2,000 resamples, 95% confidence and a
// fixed seed: the same inputs always give the same interval.
type Bootstrap struct {
	Resamples  int
	Confidence float64
	Seed       uint64
}

func (b Bootstrap) norm() Bootstrap {
	if b.Resamples <= 0 {
		b.Resamples = 2000
	}
	if b.Confidence <= 0 || b.Confidence >= 1 {
		b.Confidence = 0.95
	}
	if b.Seed == 0 {
		b.Seed = 0x1b00757a9
	}
	return b
}

// QuantileCI returns a percentile-bootstrap confidence interval of the q-quantile of xs.
func (b Bootstrap) QuantileCI(xs []float64, q float64) (Interval, bool) {
	if len(xs) < 2 {
		return Interval{}, false
	}
	b = b.norm()
	rng := rand.New(rand.NewPCG(b.Seed, uint64(len(xs))))
	est := make([]float64, b.Resamples)
	draw := resampledQuantile(xs, q)
	for i := range est {
		est[i] = draw(rng)
	}
	slices.Sort(est)
	a := (1 - b.Confidence) / 2
	return Interval{Lo: Quantile(est, a), Hi: Quantile(est, 1-a), Confidence: b.Confidence}, true
}

// RatioTest compares the q-quantile of new with that of old (q = 0.95 for p95): the ratio
// new/old, its percentile-bootstrap confidence interval, and a two-sided bootstrap p-value for
// "the ratio is 1" (twice the share of resampled ratios on the far side of 1, at least
// 1/(resamples+1)). It is the test used for tail percentiles, where a rank test on the whole
// distribution would answer a different question.
func (b Bootstrap) RatioTest(old, new []float64, q float64) (ratio float64, ci Interval, t Test, ok bool) {
	if len(old) < 2 || len(new) < 2 {
		return 0, Interval{}, Test{}, false
	}
	b = b.norm()
	so, sn := slices.Clone(old), slices.Clone(new)
	slices.Sort(so)
	slices.Sort(sn)
	base := Quantile(so, q)
	if base == 0 {
		return 0, Interval{}, Test{}, false
	}
	ratio = Quantile(sn, q) / base
	rng := rand.New(rand.NewPCG(b.Seed, uint64(len(old))<<32|uint64(len(new))))
	drawOld, drawNew := resampledQuantile(old, q), resampledQuantile(new, q)
	est := make([]float64, 0, b.Resamples)
	below, above := 0, 0
	for i := 0; i < b.Resamples; i++ {
		d := drawOld(rng)
		n := drawNew(rng)
		if d == 0 {
			continue
		}
		r := n / d
		est = append(est, r)
		switch {
		case r < 1:
			below++
		case r > 1:
			above++
		default:
			below++
			above++
		}
	}
	if len(est) == 0 {
		return 0, Interval{}, Test{}, false
	}
	slices.Sort(est)
	a := (1 - b.Confidence) / 2
	ci = Interval{Lo: Quantile(est, a), Hi: Quantile(est, 1-a), Confidence: b.Confidence}
	p := 2 * float64(min(below, above)) / float64(len(est))
	p = math.Min(1, math.Max(p, 1/float64(b.Resamples+1)))
	return ratio, ci, Test{P: p, N1: len(old), N2: len(new), Method: "bootstrap"}, true
}

// OrderStatisticMin is the sample size from which the bootstrap draws a resample's quantile from
// its order statistics instead of resampling and sorting (resampledQuantile).
const OrderStatisticMin = 1000

// resampledQuantile returns a function that draws the q-quantile of one bootstrap resample of xs
// (n draws with replacement). Below OrderStatisticMin samples it resamples and sorts. From it,
// the quantile is drawn from its exact distribution instead, in O(1): the resample's k-th
// smallest value is sorted[floor(n·U₍ₖ₎)], where U₍ₖ₎, the k-th smallest of n uniforms, is
// Beta(k, n+1−k); the (k+1)-th, for Quantile's interpolation, is U₍ₖ₎ + (1−U₍ₖ₎)·W with W the
// smallest of the n−k uniforms above it (1 − V^(1/(n−k))). Both are the same percentile
// bootstrap; the draw makes a comparison of two imported sessions of 100,000 rounds a test take
// seconds, where resampling and sorting 2,000 times took minutes a test.
//
// Note: the small-sample path is kept, not replaced, so that a comparison's published intervals
// and p-values do not move.
func resampledQuantile(xs []float64, q float64) func(*rand.Rand) float64 {
	n := len(xs)
	if n < OrderStatisticMin {
		buf := make([]float64, n)
		return func(rng *rand.Rand) float64 {
			resample(rng, xs, buf)
			slices.Sort(buf)
			return Quantile(buf, q)
		}
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	h := q * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		lo = n - 1
	}
	frac := h - float64(lo)
	k := lo + 1 // the 1-based rank of the order statistic at lo
	at := func(u float64) float64 { return sorted[min(int(u*float64(n)), n-1)] }
	return func(rng *rand.Rand) float64 {
		u := betaDraw(rng, float64(k), float64(n+1-k))
		x := at(u)
		if frac == 0 || k >= n {
			return x
		}
		w := 1 - math.Pow(rng.Float64(), 1/float64(n-k))
		return x + frac*(at(u+(1-u)*w)-x)
	}
}

// betaDraw draws from Beta(a, b), a, b ≥ 1, as X/(X+Y) of two gamma draws.
func betaDraw(rng *rand.Rand, a, b float64) float64 {
	x := GammaVariate(rng, a)
	return x / (x + GammaVariate(rng, b))
}

// GammaVariate draws from the gamma distribution of the given shape and scale 1, by Marsaglia and
// Tsang's method (ACM TOMS 26(3), 2000; a shape below 1 boosted: Gamma(k) = Gamma(k+1)·U^(1/k)).
// The bootstrap's Beta variates are made of two; the open loop's bursty arrivals of one.
func GammaVariate(r *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return GammaVariate(r, shape+1) * math.Pow(r.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

func resample(rng *rand.Rand, from, into []float64) {
	n := len(from)
	for i := range into {
		into[i] = from[rng.IntN(n)]
	}
}
