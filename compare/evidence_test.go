package compare

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// A comparison whose new side measured nothing comparable fails with the reason: it is never a
// pass. Before NoEvidence, each of these compared zero rows and Failed() was false.
func TestNoEvidenceFails(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	ok := func(params map[string]any) result.Scenario {
		return scenario("m", params, map[string][]float64{"latency_ms": lognormal(rng, 30, 10, 0.05)})
	}
	failed := func(params map[string]any) result.Scenario {
		s := scenario("m", params, nil)
		s.Status, s.Error = result.StatusFailed, "boom"
		return s
	}
	old := run("old", ok(map[string]any{"b": 1}), ok(map[string]any{"b": 8}))
	partial := run("new")
	partial.Partial = true
	cases := []struct {
		name string
		new  *result.Run
		want string // in NoEvidence
	}{
		// A run interrupted before its first scenario finished.
		{"partial with no scenario", partial, "partial (interrupted) with no scenario"},
		// Every scenario of the new run failed: nothing was measured.
		{"every scenario failed", run("new", failed(map[string]any{"b": 1}), failed(map[string]any{"b": 8})), "no scenario of the new run new succeeded (2 failed, 0 skipped)"},
		// --set batch=1 instead of b=1: the scenarios match none of the baseline's.
		{"no scenario matched", run("new", ok(map[string]any{"batch": 1})), "matches one of the old run"},
		// Matched, but the new side has other metrics only.
		{"no common metric", run("new", scenario("m", map[string]any{"b": 1}, map[string][]float64{"ttft_ms": lognormal(rng, 30, 10, 0.05)})), "no metric in common"},
	}
	for _, c := range cases {
		rep := Runs(old, c.new, Config{})
		if !rep.Failed() || !strings.Contains(rep.NoEvidence, c.want) {
			t.Errorf("%s: Failed() = %v, NoEvidence %q, want it to contain %q", c.name, rep.Failed(), rep.NoEvidence, c.want)
		}
		if strings.Contains(rep.NoEvidence, "\n") {
			t.Errorf("%s: the reason is not one line: %q", c.name, rep.NoEvidence)
		}
	}
	// One matched scenario is evidence.
	if rep := Runs(old, run("new", ok(map[string]any{"b": 1})), Config{}); rep.NoEvidence != "" {
		t.Errorf("one matched scenario: NoEvidence %q, want none", rep.NoEvidence)
	}
}
