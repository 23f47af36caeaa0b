package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestResampledQuantileLaw: from OrderStatisticMin samples the bootstrap draws a resample's
// quantile from its order statistics; its law is resampling's: the mean and spread of the p95
// and p99 of 4,000 resamples of 2,000 lognormal samples, drawn both ways, agree within a few
// percent of the spread (each way's own sampling error), and the median (no interpolation
// case aside) too.
func TestResampledQuantileLaw(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	xs := make([]float64, 2000)
	for i := range xs {
		xs[i] = math.Exp(0.3 * rng.NormFloat64())
	}
	for _, q := range []float64{0.5, 0.95, 0.99} {
		draw := resampledQuantile(xs, q)
		buf := make([]float64, len(xs))
		var fast, slow []float64
		for range 4000 {
			fast = append(fast, draw(rng))
			resample(rng, xs, buf)
			slices.Sort(buf)
			slow = append(slow, Quantile(buf, q))
		}
		mf, sf := meanStd(fast)
		ms, ss := meanStd(slow)
		if math.Abs(mf-ms) > 0.1*ss || math.Abs(sf/ss-1) > 0.1 {
			t.Errorf("q=%v: order statistics mean %.5f sd %.5f, resampling mean %.5f sd %.5f", q, mf, sf, ms, ss)
		}
	}
}

func meanStd(xs []float64) (float64, float64) {
	var s, s2 float64
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	for _, x := range xs {
		s2 += (x - m) * (x - m)
	}
	return m, math.Sqrt(s2 / float64(len(xs)-1))
}

// TestRatioTestLarge: a p95 and p99 ratio test of 100,000 samples a side finds a 10% slower tail
// and not an unchanged one (what a comparison of two imported pytest-benchmark sessions asks).
func TestRatioTestLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	gen := func(scale float64) []float64 {
		xs := make([]float64, 100_000)
		for i := range xs {
			xs[i] = scale * math.Exp(0.2*rng.NormFloat64())
		}
		return xs
	}
	old, same, slow := gen(1), gen(1), gen(1.1)
	var b Bootstrap
	for _, q := range []float64{0.95, 0.99} {
		if r, ci, tt, ok := b.RatioTest(old, slow, q); !ok || tt.P > 0.01 || ci.Lo < 1.05 || math.Abs(r-1.1) > 0.03 {
			t.Errorf("q=%v slower: ratio %.3f ci %+v p %v", q, r, ci, tt.P)
		}
		if r, ci, _, ok := b.RatioTest(old, same, q); !ok || ci.Lo > 1 || ci.Hi < 1 || math.Abs(r-1) > 0.03 {
			t.Errorf("q=%v unchanged: ratio %.3f ci %+v", q, r, ci)
		}
	}
}
