package cli

import (
	"context"
	"fmt"
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

// pytestSession is a saved pytest session of one test, as the plugin writes it: latency_ms
// gated at its recorded 5%, 99 samples spread 1% around center, started at.
func pytestSession(id string, at time.Time, center float64, seed uint64) *result.Run {
	rng := rand.New(rand.NewPCG(seed, 3))
	xs := make([]float64, 99)
	for i := range xs {
		xs[i] = center * (1 + 0.01*rng.NormFloat64())
	}
	sum, _ := stats.Summarize(xs)
	lat := result.NewMetric("latency_ms")
	lat.Summary, lat.Samples = &sum, xs
	r := &result.Run{Schema: result.Schema, ID: id, StartedAt: at, FinishedAt: at.Add(time.Minute), Scenarios: []result.Scenario{{
		Benchmark: "test_work", Scenario: "default", Subject: "pytest", Status: result.StatusOK, StartedAt: at,
		Gate: []string{"latency_ms"}, Thresholds: map[string]float64{"latency_ms": 5},
		Iterations: result.Iterations{Measured: 99}, Metrics: map[string]result.Metric{"latency_ms": lat},
	}}}
	r.Tally()
	return r
}

// saveSession writes r as dir/benchmark_results/ID/run.json and returns the folder.
func saveSession(t *testing.T, dir string, r *result.Run) string {
	t.Helper()
	p := filepath.Join(dir, "benchmark_results", r.ID)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := result.Save(p, r); err != nil {
		t.Fatal(err)
	}
	return p
}

// The reproduction through compare: an unchanged session against its saved one, which
// ran while the machine was 12% faster (n=99 a side, p ≈ 0), failed with exit 3. With
// --between-sessions (the pytest plugin's default) it is unknown, exit 0, saying the smallest
// change the sessions could have seen and what can tell; --strict fails it. With 12 stored
// sessions whose medians differ by 1-3% the learnt threshold (7%) judges: +30% fails with exit 3,
// and a change within the learnt noise passes.
func TestCompareBetweenSessions(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	st, err := store.Open(context.Background(), store.Params{URL: "sqlite:" + db})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		r := pytestSession(fmt.Sprintf("stored%02d", i), t0.Add(time.Duration(i)*time.Hour), 10*(1+0.015*float64(i%3-1)), uint64(10+i))
		if err := st.Put(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	later := t0.Add(24 * time.Hour)
	saved := saveSession(t, dir, pytestSession("saved", later, 10, 1))
	unchanged := saveSession(t, dir, pytestSession("unchanged", later.Add(time.Hour), 11.2, 2)) // the machine's slower state
	slower := saveSession(t, dir, pytestSession("slower", later.Add(time.Hour), 13, 3))         // +30%
	within := saveSession(t, dir, pytestSession("within", later.Add(time.Hour), 10.4, 4))       // +4%, within the learnt 7%
	counted := func(id string, instructions float64) string {
		r := pytestSession(id, later, 10, 5)
		s := &r.Scenarios[0]
		s.Gate, s.Thresholds = []string{"instructions"}, map[string]float64{"instructions": 2}
		s.Counted = map[string]string{"valgrind": "3.19.0", "cpu": "AMD EPYC", "python": "3.11.2"}
		s.Metrics["instructions"] = result.Metric{Unit: "count", Better: "lower", Samples: []float64{instructions, instructions, instructions, instructions, instructions}}
		return saveSession(t, dir, r)
	}
	countOld, countSame, countMore := counted("count-old", 1e6), counted("count-same", 1e6), counted("count-more", 1.03e6) // +3%: beyond 2%
	empty := filepath.Join(dir, "empty.db")
	cases := []struct {
		name string
		args []string
		code int
		out  []string // in stdout
	}{
		{"within-run test: exit 3 (the bug)", []string{saved, unchanged, "--store", empty}, 3, []string{"REGRESSION"}},
		{"between sessions, no history: unknown, exit 0", []string{saved, unchanged, "--store", empty, "--between-sessions"}, 0,
			[]string{"UNKNOWN: not known: 1 gated change(s)", "unknown between sessions (limit +5%; 0 of 10 stored sessions)", "at least 5.0%",
				"inferbench run BENCH --baseline-ref REF", "--inferbench-measure instructions", "UNKNOWN: 0 regressions"}},
		{"between sessions, no history, markdown: the status says unknown", []string{saved, unchanged, "--store", empty, "--between-sessions", "--format", "markdown"}, 0,
			[]string{"### inferbench: ❔ not known: 1 gated change(s)", "test_work/default latency_ms +12.4% (threshold 5%", "ms (+12.4%) ❔"}},
		{"between sessions, no history, --strict: exit 3", []string{saved, unchanged, "--store", empty, "--between-sessions", "--strict"}, 3,
			[]string{"FAIL: 0 regressions, 0 budgets exceeded, 1 unknown changes (--strict): not known"}},
		{"between sessions, 12 stored: +30% fails", []string{saved, slower, "--store", db, "--between-sessions"}, 3, []string{"REGRESSION (limit +7%: threshold 7% from 12 runs)"}},
		// Counts are exact: judged as they were, between sessions or not.
		{"between sessions, counted: +3% instructions fails", []string{countOld, countMore, "--store", empty, "--between-sessions"}, 3, []string{"REGRESSION"}},
		{"between sessions, counted: the same count passes", []string{countOld, countSame, "--store", empty, "--between-sessions", "--strict"}, 0, []string{"ok: 0 regressions"}},
		{"between sessions, 12 stored: +4% is within the learnt noise", []string{saved, within, "--store", db, "--between-sessions", "--strict"}, 0, []string{"worse, within limit; threshold 7% from 12 runs", "ok: 0 regressions"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, dir, nil, append([]string{"compare"}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, c.code, out, errOut)
			}
			for _, w := range c.out {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if c.code == 0 && strings.Contains(out, "UNKNOWN") && !strings.Contains(errOut, "between sessions are unknown; --strict makes them fail") {
				t.Errorf("exit 0 with an unknown change, and stderr does not say so: %q", errOut)
			}
		})
	}
}
