package stats

import (
	"math/rand/v2"
	"testing"
)

// TestChangePointRates measures, at the defaults, the false-alarm rate on A/A series (normal
// noise, CV 5%, no shift) and the detection rate of a 15% step, on seeded series; docs/history.md
// quotes the figures it logs (go test -run TestChangePointRates -v ./stats).
func TestChangePointRates(t *testing.T) {
	const trials = 2000
	rng := rand.New(rand.NewPCG(12, 12))
	series := func(n, step int, shift float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			level := 1.0
			if step > 0 && i >= step {
				level += shift
			}
			xs[i] = level * (1 + 0.05*rng.NormFloat64())
		}
		return xs
	}
	rate := func(gen func() []float64, hit func([]ChangePoint) bool, o ChangeOptions) float64 {
		k := 0
		for range trials {
			if hit(ChangePoints(gen(), o)) {
				k++
			}
		}
		return float64(k) / trials
	}
	flagged := func(cps []ChangePoint) bool { return len(cps) > 0 }
	near := func(step int) func([]ChangePoint) bool {
		return func(cps []ChangePoint) bool {
			for _, c := range cps {
				if c.Index >= step-2 && c.Index <= step+2 && c.Magnitude > 0.05 {
					return true
				}
			}
			return false
		}
	}
	for _, c := range []struct {
		name  string
		gen   func() []float64
		hit   func([]ChangePoint) bool
		check func(float64) bool
		want  string
		opts  ChangeOptions
	}{
		{"A/A, 10 runs", func() []float64 { return series(10, 0, 0) }, flagged, func(r float64) bool { return r <= 0.065 }, "<= 6.5%", ChangeOptions{}},
		{"A/A, 30 runs", func() []float64 { return series(30, 0, 0) }, flagged, func(r float64) bool { return r <= 0.065 }, "<= 6.5%", ChangeOptions{}},
		{"A/A, 100 runs", func() []float64 { return series(100, 0, 0) }, flagged, func(r float64) bool { return r <= 0.065 }, "<= 6.5%", ChangeOptions{}},
		{"15% step after run 5 of 10", func() []float64 { return series(10, 5, 0.15) }, near(5), func(r float64) bool { return r >= 0.85 }, ">= 85%", ChangeOptions{}},
		{"15% step after run 3..7 of 10", func() []float64 { s := 3 + rng.IntN(5); return series(10, s, 0.15) }, flagged, func(r float64) bool { return r >= 0.8 }, ">= 80%", ChangeOptions{}},
		{"15% step after run 10 of 20", func() []float64 { return series(20, 10, 0.15) }, near(10), func(r float64) bool { return r >= 0.97 }, ">= 97%", ChangeOptions{}},
		{"10% step after run 10 of 20", func() []float64 { return series(20, 10, 0.10) }, near(10), func(r float64) bool { return r >= 0.7 }, ">= 70%", ChangeOptions{}},
		{"--max-p 0.01: A/A, 10 runs", func() []float64 { return series(10, 0, 0) }, flagged, func(r float64) bool { return r <= 0.02 }, "<= 2%", ChangeOptions{MaxP: 0.01}},
		{"--max-p 0.01: 15% step after run 5 of 10", func() []float64 { return series(10, 5, 0.15) }, near(5), func(r float64) bool { return r >= 0.4 }, ">= 40%", ChangeOptions{MaxP: 0.01}},
	} {
		r := rate(c.gen, c.hit, c.opts)
		t.Logf("%-32s %5.1f%% of %d series flagged", c.name, 100*r, trials)
		if !c.check(r) {
			t.Errorf("%s: %.1f%% flagged, want %s", c.name, 100*r, c.want)
		}
	}
}

// BenchmarkChangePoints measures a long history: 1,000 points with three shifts, the null
// distributions cached as in a long-lived process (the first call of each length simulates it).
func BenchmarkChangePoints(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	xs := make([]float64, 1000)
	for i := range xs {
		level := 1.0 + 0.1*float64(i/250)
		xs[i] = level * (1 + 0.05*rng.NormFloat64())
	}
	for b.Loop() {
		ChangePoints(xs, ChangeOptions{})
	}
}
