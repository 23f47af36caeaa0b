package cli

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// aaLognormal draws n samples around median with coefficient of variation cv.
func aaLognormal(rng *rand.Rand, n int, median, cv float64) []float64 {
	sigma := math.Sqrt(math.Log(1 + cv*cv))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = median * math.Exp(sigma*rng.NormFloat64())
	}
	return xs
}

// aaRun is a run of one scenario, as calibrate reads it back.
func aaRun(id string, s result.Scenario) *result.Run {
	r := &result.Run{Schema: result.Schema, ID: id, Scenarios: []result.Scenario{s}}
	r.Tally()
	return r
}

// aaScenario is scenario m of benchmark bench with the samples of each metric.
func aaScenario(bench string, _ map[string]any, metrics map[string][]float64) result.Scenario {
	ms := map[string]result.Metric{}
	for k, xs := range metrics {
		ms[k] = result.SampleMetric(k, xs)
	}
	return result.Scenario{Benchmark: bench, Scenario: "m", Status: result.StatusOK, Metrics: ms}
}

func TestCalibrateRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	a := aaRun("a", aaScenario("m", nil, map[string][]float64{"latency_ms": aaLognormal(rng, 200, 10, 0.05)}))
	b := aaRun("b", aaScenario("m", nil, map[string][]float64{"latency_ms": aaLognormal(rng, 200, 10, 0.05)}))
	cals := calibrateRuns(a, b, 10, 1)
	if len(cals) != 1 {
		t.Fatalf("%d calibrations, want 1", len(cals))
	}
	c := cals[0]
	// At CV 5% a 10% shift needs few iterations (the power test above finds it at n = 30).
	if c.Iterations == 0 || c.Iterations > 30 || !c.Resolvable || c.ThresholdPct >= 10 || math.Abs(c.CV-0.05) > 0.01 {
		t.Errorf("calibration %+v: want ≤ 30 iterations, a threshold below 10%% and CV ≈ 5%%", c)
	}
	if d := calibrateRuns(a, b, 10, 1); d[0].Iterations != c.Iterations || d[0].NoisePct != c.NoisePct {
		t.Errorf("not deterministic: %+v then %+v", c, d[0])
	}
	// Noisy: CV 40% cannot resolve 2%.
	a = aaRun("a", aaScenario("m", nil, map[string][]float64{"latency_ms": aaLognormal(rng, 100, 10, 0.4)}))
	b = aaRun("b", aaScenario("m", nil, map[string][]float64{"latency_ms": aaLognormal(rng, 100, 10, 0.4)}))
	if c := calibrateRuns(a, b, 2, 1)[0]; c.Resolvable || len(c.Notes) == 0 {
		t.Errorf("CV 40%%, effect 2%%: %+v, want not resolvable with a note", c)
	}
}
