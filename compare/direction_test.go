package compare

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// runWith is a run of one scenario whose metrics are made by make.
func runWith(id string, metrics map[string]result.Metric) *result.Run {
	return &result.Run{ID: id, Scenarios: []result.Scenario{{Benchmark: "b", Scenario: "default", Status: result.StatusOK, Metrics: metrics}}}
}

// sampled is a distribution metric of n samples around center (1% noise), as the engine makes it
// from a subject's reported figures.
func sampled(name string, center float64, seed uint64) result.Metric {
	rng := rand.New(rand.NewPCG(seed, 7))
	xs := make([]float64, 30)
	for i := range xs {
		xs[i] = center * (1 + 0.01*rng.NormFloat64())
	}
	m := result.NewMetric(name)
	s, _ := stats.Summarize(xs)
	m.Summary, m.Samples = &s, xs
	return m
}

// Seed 000's benchmarks return {"throughput": 1000}: a 26% rise is an improvement, not a
// regression. Failed before: "throughput" fell back on lower-is-better and exited 3.
func TestThroughputByNameIsHigherIsBetter(t *testing.T) {
	old := runWith("old", map[string]result.Metric{"throughput": sampled("throughput", 1000, 1)})
	nw := runWith("new", map[string]result.Metric{"throughput": sampled("throughput", 1260, 2)})
	rep := Runs(old, nw, Config{})
	if rep.Failed() || rep.Improvements != 1 || rep.Rows[0].Better != "higher" {
		t.Errorf("throughput 1000 → 1260: failed %v, improvements %d, rows %+v; want an improvement judged higher-is-better", rep.Failed(), rep.Improvements, rep.Rows)
	}
	// And a 26% fall is a regression, where the metric gates.
	rep = Runs(nw, old, Config{Gate: []string{"throughput"}})
	if rep.Regressions != 1 {
		t.Errorf("throughput 1260 → 1000: %d regressions, want 1", rep.Regressions)
	}
}

// A metric nobody gave a direction is reported as changed, never gated.
func TestUnknownDirectionIsNotGated(t *testing.T) {
	old := runWith("old", map[string]result.Metric{"widgets": sampled("widgets", 100, 1)})
	nw := runWith("new", map[string]result.Metric{"widgets": sampled("widgets", 300, 2)})
	rep := Runs(old, nw, Config{})
	if rep.Failed() || rep.Rows[0].Verdict != Changed || rep.Rows[0].Better != "" {
		t.Fatalf("widgets 100 → 300: failed %v, row %+v; want verdict changed with no direction", rep.Failed(), rep.Rows[0])
	}
	found := false
	for _, w := range rep.Warnings {
		found = found || (strings.Contains(w, "no known better direction") && strings.Contains(w, "widgets"))
	}
	if !found {
		t.Errorf("no warning names the undirected metric: %q", rep.Warnings)
	}
}

// A declared direction (recorded on the metric) wins over the name's guess, and a direction the
// old run recorded differently is warned about.
func TestDeclaredDirectionWins(t *testing.T) {
	o, n := sampled("err_budget_used", 100, 1), sampled("err_budget_used", 130, 2)
	n.Better = "higher" // declared by the producer: more budget used is better, whatever the name says
	rep := Runs(runWith("old", map[string]result.Metric{"err_budget_used": o}), runWith("new", map[string]result.Metric{"err_budget_used": n}), Config{})
	if rep.Failed() || rep.Rows[0].Verdict != Improvement || len(rep.Rows[0].Warnings) == 0 {
		t.Errorf("declared higher, 100 → 130: %+v; want an improvement with a warning that the old run recorded lower", rep.Rows[0])
	}
}

// A single value of a memory figure is never a regression by itself, a peak included, even when
// it gates: only a budget fails on one value.
func TestSingleValueMemoryNeverFails(t *testing.T) {
	v := func(name string, x float64) map[string]result.Metric {
		m := result.NewMetric(name)
		m.Value = &x
		return map[string]result.Metric{name: m}
	}
	if rep := Runs(runWith("o", v("rss_growth_mb", 0.5)), runWith("n", v("rss_growth_mb", 3)), Config{}); rep.Failed() {
		t.Errorf("rss_growth_mb 0.5 → 3: %+v, want not failed", rep.Rows)
	}
	if rep := Runs(runWith("o", v("peak_rss_mb", 100)), runWith("n", v("peak_rss_mb", 150)), Config{Gate: []string{"peak_rss_mb"}}); rep.Failed() || rep.Unverified != 1 {
		t.Errorf("peak_rss_mb 100 → 150, gated: %+v, want unverified, not failed", rep.Rows)
	}
}

// A run stored before directions could be unknown recorded "lower" for a name it did not know:
// against a new run that knows nothing about it, the metric is still not gated.
func TestLegacyLowerRecordIsNotADirection(t *testing.T) {
	o, n := sampled("widgets", 100, 1), sampled("widgets", 300, 2)
	o.Better = "lower"
	rep := Runs(runWith("old", map[string]result.Metric{"widgets": o}), runWith("new", map[string]result.Metric{"widgets": n}), Config{})
	if rep.Failed() || rep.Rows[0].Verdict != Changed {
		t.Errorf("widgets recorded lower in the old run only: %+v, want changed and not gated", rep.Rows[0])
	}
}
