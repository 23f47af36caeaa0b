package cli

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// calibration is what an A/A comparison (a scenario run twice, unchanged) says about one metric
// on this machine.
type calibration struct {
	Benchmark string  `json:"benchmark"`
	Scenario  string  `json:"scenario"`
	Metric    string  `json:"metric"`
	N1        int     `json:"n1"`
	N2        int     `json:"n2"`
	CV        float64 `json:"cv"`         // pooled coefficient of variation of the samples
	DriftPct  float64 `json:"drift_pct"`  // median of the second run vs the first, percent
	DriftP    float64 `json:"drift_p"`    // Mann-Whitney p of the two runs (small: the runs differ although nothing changed)
	EffectPct float64 `json:"effect_pct"` // the effect size asked for
	// Iterations is the smallest measured-iteration count at which the effect is detected with
	// at least 95% power (0: not within 1,000).
	Iterations int `json:"iterations"`
	// NoisePct is the 99th percentile of |median delta| between two A/A samples of Iterations.
	NoisePct float64 `json:"noise_pct"`
	// ThresholdPct is the recommended regression threshold: above the noise and the run-to-run
	// drift, so A/A runs do not fail.
	ThresholdPct float64 `json:"threshold_pct"`
	// Resolvable: the threshold is below the effect, so a change of that size would be caught.
	Resolvable bool     `json:"resolvable"`
	Notes      []string `json:"notes,omitempty"`
}

// calibrationIterations are the iteration counts tried.
var calibrationIterations = []int{10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 1000}

// calibrateRuns analyses two runs of the same scenarios taken without any change (A/A) and, for a
// target effect in percent, recommends per metric with samples the iterations and the threshold.
// Power is estimated by resampling the pooled samples (seeded: deterministic).
func calibrateRuns(a, b *result.Run, effectPct float64, seed uint64) []calibration {
	byKey := map[string]*result.Scenario{}
	for i := range a.Scenarios {
		byKey[compare.Key(&a.Scenarios[i])] = &a.Scenarios[i]
	}
	var out []calibration
	for i := range b.Scenarios {
		sb := &b.Scenarios[i]
		sa, ok := byKey[compare.Key(sb)]
		if !ok || sa.Status != result.StatusOK || sb.Status != result.StatusOK {
			continue
		}
		names := make([]string, 0, len(sb.Metrics))
		for k, m := range sb.Metrics {
			if len(m.Samples) >= 5 && len(sa.Metrics[k].Samples) >= 5 {
				names = append(names, k)
			}
		}
		slices.Sort(names)
		for _, name := range names {
			xa, xb := sa.Metrics[name].Samples, sb.Metrics[name].Samples
			out = append(out, calibrateMetric(sb, name, xa, xb, effectPct, seed))
		}
	}
	return out
}

func calibrateMetric(s *result.Scenario, name string, xa, xb []float64, effect float64, seed uint64) calibration {
	c := calibration{Benchmark: s.Benchmark, Scenario: s.Scenario, Metric: name, N1: len(xa), N2: len(xb), EffectPct: effect}
	pooled := append(slices.Clone(xa), xb...)
	if sum, err := stats.Summarize(pooled); err == nil {
		c.CV = sum.CV
	}
	ma, _, _ := stats.MedianInterval(xa, 0.95)
	mb, _, _ := stats.MedianInterval(xb, 0.95)
	c.DriftPct = pctChange(ma, mb)
	c.DriftP = stats.MannWhitney(xa, xb, 0).P
	if c.DriftP <= stats.DefaultAlpha {
		c.Notes = append(c.Notes, "the two unchanged runs differ significantly: the machine drifts between runs (thermal, frequency scaling, neighbours); pin CPUs or use a quieter runner")
	}
	rng := rand.New(rand.NewPCG(seed, 0xca11b))
	const trials = 200
	draw := func(n int, f float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = pooled[rng.IntN(len(pooled))] * f
		}
		return xs
	}
	var noise []float64
	for _, n := range calibrationIterations {
		hits := 0
		noise = noise[:0]
		for t := 0; t < trials; t++ {
			x, y := draw(n, 1), draw(n, 1+effect/100)
			if stats.MannWhitney(x, y, 0).P <= stats.DefaultAlpha {
				hits++
			}
			x0, y0 := draw(n, 1), draw(n, 1)
			m0, _, _ := stats.MedianInterval(x0, 0.95)
			m1, _, _ := stats.MedianInterval(y0, 0.95)
			noise = append(noise, math.Abs(pctChange(m0, m1)))
		}
		if float64(hits) >= 0.95*trials {
			c.Iterations = n
			break
		}
	}
	if c.Iterations == 0 {
		c.Notes = append(c.Notes, "a change of this size is not detected with 95% power within 1,000 iterations")
	}
	slices.Sort(noise)
	c.NoisePct = stats.Quantile(noise, 0.99)
	c.ThresholdPct = math.Ceil(math.Max(c.NoisePct, math.Abs(c.DriftPct)) * 1.5)
	c.ThresholdPct = math.Max(c.ThresholdPct, 1)
	c.Resolvable = c.Iterations > 0 && c.ThresholdPct < effect
	if !c.Resolvable && c.Iterations > 0 {
		c.Notes = append(c.Notes, "the threshold this noise needs is not below the effect: a change of this size would be significant but not a regression")
	}
	return c
}

// calibrateMetric's figure for one metric: the change from old to new in percent, as a
// comparison's delta (NaN from zero, 0 between zeros).
func pctChange(old, new float64) float64 {
	switch {
	case old != 0:
		return (new/old - 1) * 100
	case new == 0:
		return 0
	}
	return math.NaN()
}
