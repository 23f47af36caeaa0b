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
	buf := make([]float64, len(xs))
	for i := range est {
		resample(rng, xs, buf)
		slices.Sort(buf)
		est[i] = Quantile(buf, q)
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
	bo, bn := make([]float64, len(old)), make([]float64, len(new))
	est := make([]float64, 0, b.Resamples)
	below, above := 0, 0
	for i := 0; i < b.Resamples; i++ {
		resample(rng, old, bo)
		resample(rng, new, bn)
		slices.Sort(bo)
		slices.Sort(bn)
		d := Quantile(bo, q)
		if d == 0 {
			continue
		}
		r := Quantile(bn, q) / d
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

func resample(rng *rand.Rand, from, into []float64) {
	n := len(from)
	for i := range into {
		into[i] = from[rng.IntN(n)]
	}
}
