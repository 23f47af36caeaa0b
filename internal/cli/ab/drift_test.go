package ab

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/result"
)

// machine simulates a shared box whose calls slow down steadily, by drift over the whole session
// (0.10: the last call is 10% slower than the first), with lognormal noise of CV cv per call.
// Calls of both variants share its clock: the call counter.
type machine struct {
	rng          *rand.Rand
	calls, total int
	drift, cv    float64
}

func (m *machine) call(base float64) float64 {
	f := 1 + m.drift*float64(m.calls)/float64(m.total)
	m.calls++
	sigma := math.Sqrt(math.Log(1 + m.cv*m.cv))
	return base * f * math.Exp(sigma*m.rng.NormFloat64())
}

// abTrial runs one interleaved A/B of two variants whose true medians are 10 and 10*slowdown,
// of the fixed design of issue 12 (20 pairs of blocks of 20 calls) unless o says otherwise.
func abTrial(seed uint64, drift, slowdown float64, o Options) *Result {
	if o.Pairs == 0 {
		o.Pairs = 20
	}
	if o.BlockCalls == 0 {
		o.BlockCalls = 20
	}
	o = o.norm()
	m := &machine{rng: rand.New(rand.NewPCG(seed, 1)), total: 2 * (o.Warmup + o.Pairs*o.BlockCalls), drift: drift, cv: 0.10}
	base := [2]float64{10, 10 * slowdown}
	sample := func(_ context.Context, v, n int) ([]float64, int, error) {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = m.call(base[v])
		}
		return xs, 0, nil
	}
	r, err := Run(context.Background(), "A", "B", sample, o)
	if err != nil {
		panic(err)
	}
	return r
}

// sequentialTrial measures the same calls as abTrial, but all of A and then all of B (two runs,
// before and after), and judges them as `inferbench compare` does, at the same level and
// threshold.
func sequentialTrial(seed uint64, drift, slowdown float64, o Options) *compare.Report {
	o.Pairs, o.BlockCalls = 20, 20
	o = o.norm()
	per := o.Warmup + o.Pairs*o.BlockCalls
	m := &machine{rng: rand.New(rand.NewPCG(seed, 1)), total: 2 * per, drift: drift, cv: 0.10}
	side := func(base float64) result.Scenario {
		var xs []float64
		for i := 0; i < per; i++ {
			if x := m.call(base); i >= o.Warmup {
				xs = append(xs, x)
			}
		}
		return result.Scenario{Benchmark: "b", Scenario: "s", Status: result.StatusOK, Metrics: map[string]result.Metric{"latency_ms": result.SampleMetric("latency_ms", xs)}}
	}
	old := &result.Run{ID: "before", Scenarios: []result.Scenario{side(10)}}
	nw := &result.Run{ID: "after", Scenarios: []result.Scenario{side(10 * slowdown)}}
	var th compare.Thresholds
	th.Metrics = map[string]float64{"latency_ms": *o.Threshold}
	return compare.Runs(old, nw, compare.Config{Alpha: o.Alpha, Thresholds: th, Tails: []float64{}})
}

// TestInterleavedHoldsFalsePositivesUnderDrift is the bar of issue 12: on seeded synthetic data
// with a slow drift of 10% over the session and no difference between A and B, the interleaved
// A/B fails the gate (a regression of B) in at most 1% of trials, where a sequential
// before/after compare of the same calls does not. The gate is the strictest one: any
// significant slowdown (threshold 0%) at the A/B's default level, alpha 0.01; the same gate
// with a 2% threshold is measured too. docs/history.md quotes the figures logged here
// (go test -run TestInterleavedHoldsFalsePositivesUnderDrift -v ./ab).
func TestInterleavedHoldsFalsePositivesUnderDrift(t *testing.T) {
	const trials = 2000
	for _, c := range []struct {
		name      string
		drift     float64
		threshold float64
	}{
		{"no drift, threshold 0%", 0, 0},
		{"10% drift, threshold 0%", 0.10, 0},
		{"10% drift, threshold 2%", 0.10, 2},
	} {
		th := c.threshold
		o := Options{Threshold: &th}
		abFP, seqFP := 0, 0
		for i := range trials {
			if abTrial(uint64(i), c.drift, 1, o).Failed() {
				abFP++
			}
			if sequentialTrial(uint64(i), c.drift, 1, o).Failed() {
				seqFP++
			}
		}
		ab, seq := float64(abFP)/trials, float64(seqFP)/trials
		t.Logf("A = B, %-24s interleaved A/B %5.1f%%  sequential compare %5.1f%%  false positives of %d", c.name, 100*ab, 100*seq, trials)
		// alpha 0.01 bounds the rate of a false "slower"; at threshold 0% the boundary is the
		// truth itself, so the rate is alpha's: allowed 3 binomial standard errors above it.
		if limit := 0.01 + 3*math.Sqrt(0.01*0.99/trials); ab > limit {
			t.Errorf("%s: interleaved A/B false-positive rate %.1f%%, want <= %.2f%%", c.name, 100*ab, 100*limit)
		}
		if c.drift > 0 && seq <= 0.01 {
			t.Errorf("%s: sequential compare false-positive rate %.1f%%: the simulation does not show the drift", c.name, 100*seq)
		}
	}
	// Power: B truly 5% slower, under the same drift.
	th := 0.0
	hit := 0
	var widths float64
	for i := range trials {
		r := abTrial(uint64(i), 0.10, 1.05, Options{Threshold: &th})
		if r.Failed() {
			hit++
		}
		widths += r.CI.Hi - r.CI.Lo
	}
	t.Logf("B 5%% slower, 10%% drift: interleaved A/B finds the regression in %.1f%% of %d trials; mean 98%% CI width of the ratio (each end at alpha) %.3f", 100*float64(hit)/trials, trials, widths/trials)
	if float64(hit)/trials < 0.9 {
		t.Errorf("B 5%% slower: found in %.1f%% of trials, want >= 90%%", 100*float64(hit)/trials)
	}
}

// A run's verdict carries the ratio's interval, and B 20% faster is an improvement.
func TestVerdictAndInterval(t *testing.T) {
	r := abTrial(7, 0, 0.8, Options{})
	if r.Verdict != compare.Improvement || r.CI.Lo > r.Ratio || r.CI.Hi < r.Ratio || r.CI.Hi >= 1 || r.Pairs != 20 || len(r.Blocks) != 40 {
		t.Errorf("B 20%% faster: %+v", r)
	}
	// ABBA: pair 0 runs A first, pair 1 B first.
	if r.Blocks[0].Variant != "A" || r.Blocks[2].Variant != "B" {
		t.Errorf("block order %v %v, want A first in pair 0 and B first in pair 1", r.Blocks[0].Variant, r.Blocks[2].Variant)
	}
	if _, err := Analyze(r.Blocks[:4], Options{}); err == nil {
		t.Error("two pairs analysed without an error")
	}
}
