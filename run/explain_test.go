package run

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// run --baseline explains a regression from the profiles of both runs when the baseline's folder
// is beside the new run's, and says how to get them when it is not.
func TestExplainBaseline(t *testing.T) {
	results := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 8))
	runs := make([]*result.Run, 2)
	for i, f := range []float64{1, 1.25} {
		xs := make([]float64, 30)
		for j := range xs {
			xs[j] = 10 * f * (1 + 0.01*rng.NormFloat64())
		}
		s, _ := stats.Summarize(xs)
		m := result.NewMetric("latency_ms")
		m.Summary, m.Samples = &s, xs
		id := []string{"base", "head"}[i]
		runs[i] = &result.Run{Schema: result.Schema, ID: id, Environment: map[string]any{}, Scenarios: []result.Scenario{{
			Benchmark: "cg", Scenario: "default", Subject: "exec", Status: result.StatusOK, Iterations: result.Iterations{Measured: 30},
			Metrics: map[string]result.Metric{"latency_ms": m}, Profiles: []string{"profiles/cg/callgrind.out"}}}}
		b, err := os.ReadFile(filepath.Join("..", "internal", "explain", "testdata", "callgrind.out."+[]string{"old", "new"}[i]))
		if err != nil {
			t.Fatal(err)
		}
		pdir := filepath.Join(results, id, "profiles", "cg")
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(pdir, "callgrind.out"), b, 0o644)
		if err := result.Save(filepath.Join(results, id), runs[i]); err != nil {
			t.Fatal(err)
		}
	}
	v := &Verdict{BaselineRun: runs[0], Compare: compare.Runs(runs[0], runs[1], compare.Config{})}
	if v.Compare.Regressions != 1 {
		t.Fatalf("%d regressions, want 1", v.Compare.Regressions)
	}
	xs := explainBaseline(filepath.Join(results, "head"), runs[1], v)
	if len(xs) != 1 || xs[0].Explanation == nil || len(xs[0].Explanation.Named) == 0 || xs[0].Explanation.Named[0].Name != "grow" {
		t.Fatalf("explanations %+v: want grow named", xs)
	}
	os.RemoveAll(filepath.Join(results, "base"))
	xs = explainBaseline(filepath.Join(results, "head"), runs[1], v)
	if len(xs) != 1 || !strings.Contains(xs[0].Headline(), "not explained: the old run has no folder here") {
		t.Errorf("without the baseline's folder: %+v", xs)
	}
}
