package compare

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// TestSharedKeyRefused: a run two of whose different scenarios share one matching key is not
// compared (nothing comparable, naming both); the same scenario twice is one identity. Before,
// the second took the first's baseline without a word (issue 46: pint's 104 tests, 36 keys).
func TestSharedKeyRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 6))
	mk := func(name, source string) result.Scenario {
		s := scenario("test_getattr", map[string]any{"key": "xxxxx"}, map[string][]float64{"latency_ms": lognormal(rng, 30, 1, 0.02)})
		s.Scenario, s.Source = name, source
		return s
	}
	old := run("old", mk("kilometer", "t.py::test_getattr[kilometer]"), mk("second", "t.py::test_getattr[second]"))
	new := run("new", mk("kilometer", "t.py::test_getattr[kilometer]"), mk("second", "t.py::test_getattr[second]"))
	rep := Runs(old, new, Config{})
	if !rep.Failed() || len(rep.Rows) != 0 || !strings.Contains(rep.NoEvidence, "different scenarios with one matching key") ||
		!strings.Contains(rep.NoEvidence, "test_getattr/kilometer") || !strings.Contains(rep.NoEvidence, "test_getattr/second") {
		t.Errorf("shared key: failed %v, %d rows, %q", rep.Failed(), len(rep.Rows), rep.NoEvidence)
	}
	if why := Shared(run("twice", mk("kilometer", "s"), mk("kilometer", "s"))); why != "" {
		t.Errorf("the same scenario twice: %q", why)
	}
	distinct := run("d", scenario("b", map[string]any{"n": 1}, nil), scenario("b", map[string]any{"n": 2}, nil))
	if why := Shared(distinct); why != "" {
		t.Errorf("distinct parameters: %q", why)
	}
}

// TestRecordedThresholds: a scenario's recorded thresholds (the pytest plugin's latency_ms 5%)
// judge a comparison whose command line says nothing of the metric, so that a hand-run compare
// of a saved session judges as the plugin did; a --threshold still wins. Before, the same +8%
// passed by hand (compare's 15%) and failed in the plugin.
func TestRecordedThresholds(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	mk := func(median float64, rec map[string]float64) *result.Run {
		s := scenario("test_parse", nil, map[string][]float64{"latency_ms": lognormal(rng, 99, median, 0.01)})
		s.Scenario, s.Thresholds = "default", rec
		return run("r", s)
	}
	rec := map[string]float64{"latency_ms": 5}
	verdict := func(cfg Config, old, new *result.Run) (string, float64) {
		t.Helper()
		rep := Runs(old, new, cfg)
		for _, r := range rep.Rows {
			if r.Metric == "latency_ms" {
				return r.Verdict, r.Threshold
			}
		}
		t.Fatalf("no latency_ms row: %+v", rep)
		return "", 0
	}
	if v, th := verdict(Config{}, mk(1, rec), mk(1.08, rec)); v != Regression || th != 5 {
		t.Errorf("recorded 5%%, +8%%: %s at threshold %v, want a regression at 5", v, th)
	}
	if v, th := verdict(Config{}, mk(1, nil), mk(1.08, nil)); v == Regression || th != 15 {
		t.Errorf("nothing recorded, +8%%: %s at threshold %v, want no regression at 15", v, th)
	}
	var cfg Config
	if err := cfg.Thresholds.Set("latency_ms=10"); err != nil {
		t.Fatal(err)
	}
	if v, th := verdict(cfg, mk(1, rec), mk(1.08, rec)); v == Regression || th != 10 {
		t.Errorf("--threshold latency_ms=10 over recorded 5%%: %s at %v", v, th)
	}
}
