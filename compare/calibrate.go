package compare

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// Calibration is what an A/A comparison (a scenario run twice, unchanged) says about one metric
// on this machine.
type Calibration struct {
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

// Calibrate analyses two runs of the same scenarios taken without any change (A/A) and, for a
// target effect in percent, recommends per metric with samples the iterations and the threshold.
// Power is estimated by resampling the pooled samples (seeded: deterministic).
func Calibrate(a, b *result.Run, effectPct float64, seed uint64) []Calibration {
	byKey := map[string]*result.Scenario{}
	for i := range a.Scenarios {
		byKey[Key(&a.Scenarios[i])] = &a.Scenarios[i]
	}
	var out []Calibration
	for i := range b.Scenarios {
		sb := &b.Scenarios[i]
		sa, ok := byKey[Key(sb)]
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
			out = append(out, calibrate(sb, name, xa, xb, effectPct, seed))
		}
	}
	return out
}

func calibrate(s *result.Scenario, name string, xa, xb []float64, effect float64, seed uint64) Calibration {
	c := Calibration{Benchmark: s.Benchmark, Scenario: s.Scenario, Metric: name, N1: len(xa), N2: len(xb), EffectPct: effect}
	pooled := append(slices.Clone(xa), xb...)
	if sum, err := stats.Summarize(pooled); err == nil {
		c.CV = sum.CV
	}
	ma, _, _ := stats.MedianInterval(xa, 0.95)
	mb, _, _ := stats.MedianInterval(xb, 0.95)
	c.DriftPct = delta(ma, mb)
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
			noise = append(noise, math.Abs(delta(m0, m1)))
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

// minHistoryRuns is how many stored runs of a scenario a noise-aware threshold needs
// (Config.MinHistory's default).
const minHistoryRuns = 10

// History returns the centers of a metric ("latency_ms", "latency_ms.p95") of scenario s in the
// stored runs before the one compared, oldest first, for noise-aware thresholds
// (Config.History). It must be safe for concurrent use.
type History func(s *result.Scenario, metric string) []float64

// historyNoise is what the stored runs of a scenario say about a metric's run-to-run noise.
type historyNoise struct {
	Runs int // stored runs the figure comes from
	// NoisePct is the bound on |change| between two runs with nothing changed: the larger of
	// 2.576 robust standard deviations of the change between consecutive runs (1.4826 × the
	// median absolute deviation of their log ratios: their 99th percentile were they normal) and
	// the largest change once the largest few are left out (one moment in 15 runs: Outliers).
	// The second is the tail as measured, whatever its shape, where a machine moves often; the
	// changes left out are the history's few worst moments (a build next door, one real shift),
	// which do not set the bound.
	//
	// Note: the bound was the second largest change (one left out). On a loaded machine one or
	// two moments of a history of 30 then set it: a CPU-bound command whose consecutive
	// unchanged runs differed by at most 4% had a 28.1% threshold, and a 10.9% slowdown passed.
	// Leaving one moment in 15 runs out lets two moments in 30 pass unseen; a machine that moves
	// more often than that is still seen (simulated: docs/verdicts.md).
	NoisePct float64
	// Outliers is how many of the largest changes the bound left out.
	Outliers int
	// ThresholdPct is Calibrate's rule applied to it: 1.5 × NoisePct, at least 1%, rounded up to
	// a tenth of a percent.
	ThresholdPct float64
}

// NoiseOf measures the noise of centers (one per stored run, oldest first) and the threshold it
// asks for; false with fewer than min runs (MinHistoryRuns when min <= 0) or a center that is
// not positive and finite.
func NoiseOf(centers []float64, min int) (historyNoise, bool) {
	if min <= 0 {
		min = minHistoryRuns
	}
	if len(centers) < min || len(centers) < 3 {
		return historyNoise{}, false
	}
	d := make([]float64, 0, len(centers)-1)
	for i := 1; i < len(centers); i++ {
		a, b := centers[i-1], centers[i]
		if !(a > 0 && b > 0) || math.IsInf(a, 0) || math.IsInf(b, 0) {
			return historyNoise{}, false
		}
		d = append(d, math.Log(b/a))
	}
	slices.Sort(d)
	med := stats.Quantile(d, 0.5)
	dev := make([]float64, len(d))
	for i, x := range d {
		dev[i] = math.Abs(x - med)
	}
	slices.Sort(dev)
	sigma := 1.4826 * stats.Quantile(dev, 0.5)
	out := outliers(len(dev))
	bound := math.Max(2.576*sigma, dev[len(dev)-1-out])
	n := historyNoise{Runs: len(centers), NoisePct: 100 * (math.Exp(bound) - 1), Outliers: out}
	n.ThresholdPct = math.Max(1, math.Ceil(10*1.5*n.NoisePct)/10)
	return n, true
}

// outliers is how many of m changes between consecutive runs the noise bound leaves out: one
// moment in every 15 runs, left out whole (a run that moved makes two changes), at least one
// change: 1 of 9 (10 runs), 4 of 29 (30 runs), 6 of 49 (50 runs).
func outliers(m int) int { return min(m-1, max(1, 2*((m+1)/15))) }
