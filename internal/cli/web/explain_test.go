package web

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/store"
)

// The dashboard's compare page explains a regression from the profiles in the runs' folders
// (serve's results directory), and says how to get them when a folder is not there.
func TestComparePageExplains(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, store.Params{URL: filepath.Join(dir, "history.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	runsDir := filepath.Join(dir, "benchmark_results")
	for i, f := range []float64{1, 1.3} {
		xs := make([]float64, 30)
		for j := range xs {
			xs[j] = 10 * f * (1 + 0.01*rng.NormFloat64())
		}
		s, _ := stats.Summarize(xs)
		m := result.NewMetric("latency_ms")
		m.Summary, m.Samples = &s, xs
		id := []string{"old", "new"}[i]
		r := &result.Run{Schema: result.Schema, ID: id, StartedAt: time.Date(2026, 11, 1+i, 0, 0, 0, 0, time.UTC), Environment: map[string]any{},
			Scenarios: []result.Scenario{{Benchmark: "cg", Scenario: "default", Subject: "exec", Status: result.StatusOK,
				Iterations: result.Iterations{Measured: 30}, Metrics: map[string]result.Metric{"latency_ms": m},
				Profiles: []string{"profiles/cg/callgrind.out"}}}}
		r.Tally()
		if err := st.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join("..", "..", "explain", "testdata", "callgrind.out."+id))
		if err != nil {
			t.Fatal(err)
		}
		pdir := filepath.Join(runsDir, id, "profiles", "cg")
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(pdir, "callgrind.out"), b, 0o644)
		if err := result.Save(filepath.Join(runsDir, id), r); err != nil {
			t.Fatal(err)
		}
	}
	w := get(t, New(st, WithRunsDir(runsDir)), "/compare?base=old&head=new")
	if w.Code != 200 || !strings.Contains(w.Body.String(), "<code>grow</code> +60k Ir per call (100%)") || !strings.Contains(w.Body.String(), `<svg class="flame"`) {
		t.Errorf("GET /compare: %d, want the explanation and its flame graph", w.Code)
	}
	w = get(t, New(st), "/compare?base=old&head=new")
	if !strings.Contains(w.Body.String(), "not explained: the old run has no folder here") {
		t.Errorf("GET /compare without the run folders: want why it is not explained")
	}
}
