package compare

import (
	"math"
	"slices"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

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
	// more often than that is still seen (simulated: docs/measurements/verdicts.md).
	NoisePct float64
	// Outliers is how many of the largest changes the bound left out.
	Outliers int
	// ThresholdPct is the calibrate command's rule applied to it: 1.5 × NoisePct, at least 1%, rounded up to
	// a tenth of a percent.
	ThresholdPct float64
}

// noiseOf measures the noise of centers (one per stored run, oldest first) and the threshold it
// asks for; false with fewer than min runs (MinHistoryRuns when min <= 0) or a center that is
// not positive and finite.
func noiseOf(centers []float64, min int) (historyNoise, bool) {
	if min = needRuns(min); len(centers) < min || len(centers) < 3 {
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

// needRuns is how many stored runs a noise-aware threshold needs: Config.MinHistory, else
// minHistoryRuns.
func needRuns(minHistory int) int {
	if minHistory <= 0 {
		return minHistoryRuns
	}
	return minHistory
}

// outliers is how many of m changes between consecutive runs the noise bound leaves out: one
// moment in every 15 runs, left out whole (a run that moved makes two changes), at least one
// change: 1 of 9 (10 runs), 4 of 29 (30 runs), 6 of 49 (50 runs).
func outliers(m int) int { return min(m-1, max(1, 2*((m+1)/15))) }
