package compare

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// session is a metric of n samples measured in one session of a machine in one state: spread
// 1% around center, in the order measured.
func session(name string, center float64, n int, seed uint64) result.Metric {
	rng := rand.New(rand.NewPCG(seed, 11))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = center * (1 + 0.01*rng.NormFloat64())
	}
	return result.SampleMetric(name, xs)
}

// history is n stored runs' medians of latency_ms around 10, moving by spread (a fraction)
// between runs in turn.
func history(n int, spread float64) History {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = 10 * (1 + spread*float64(i%3-1))
	}
	return func(_ *result.Scenario, metric string) []float64 {
		if metric == "latency_ms" {
			return xs
		}
		return nil
	}
}

// The reproduction and its answer: an unchanged pytest session compared with its saved
// one, which ran while the machine was in its faster state (every sample 12% faster, 99 a side:
// p ≈ 0). Within-run tests call it a regression (exit 3, 5 times in 5 on the VM); between
// sessions it is unknown until the store has learnt the machine's run-to-run noise, and then
// the learnt threshold judges, a real +30% still failing. Counts are judged as they were.
func TestBetweenSessions(t *testing.T) {
	plugin := Thresholds{}
	if err := plugin.Set("latency_ms=5"); err != nil { // the plugin's default --threshold
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		newCenter  float64 // old is 10 ms
		cfg        Config
		verdict    string
		failed     bool
		unknown    int
		threshold  float64 // of the row, 0: not checked
		thresholdN int     // ThresholdRuns
	}{
		// Before Config.Sessions, and still without it: the within-run test fails the session.
		{"within-run test: +12% fails", 11.2, Config{Thresholds: plugin}, Regression, true, 0, 5, 0},
		// The reproduction: not known, not failing.
		{"between sessions, no history: +12% is unknown", 11.2, Config{Thresholds: plugin, Sessions: true}, Unknown, false, 1, 5, 0},
		{"between sessions, 9 stored runs: still unknown", 11.2, Config{Thresholds: plugin, Sessions: true, History: history(9, 0.01)}, Unknown, false, 1, 5, 0},
		// --strict fails what the sessions cannot tell.
		{"between sessions, strict: unknown fails", 11.2, Config{Thresholds: plugin, Sessions: true, Strict: true}, Unknown, true, 1, 5, 0},
		// A history in two states 70% apart: its threshold judges, and +12% is within it.
		{"between sessions, a noisy history: +12% within its noise", 11.2, Config{Thresholds: plugin, Sessions: true, History: history(12, 0.35)}, Worse, false, 0, 0, 12},
		// A history whose medians differ by 1.5-3%: its threshold (6.9%) is the larger and
		// judges; +30% fails, and so does +12%.
		{"between sessions, a 1-2% history: +30% fails", 13, Config{Thresholds: plugin, Sessions: true, History: history(12, 0.015)}, Regression, true, 0, 6.9, 12},
		{"between sessions, a 1-2% history: +12% fails", 11.2, Config{Thresholds: plugin, Sessions: true, History: history(12, 0.015)}, Regression, true, 0, 6.9, 12},
		// A quieter history (0.5-1%): the stated 5% is the larger and judges.
		{"between sessions, a quiet history: the stated threshold judges", 11.2, Config{Thresholds: plugin, Sessions: true, History: history(12, 0.005)}, Regression, true, 0, 5, 0},
		// Within the threshold nothing is unknown.
		{"between sessions, no history: +2% is worse, within the threshold", 10.2, Config{Thresholds: plugin, Sessions: true}, Worse, false, 0, 5, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := pairOf("old", "pytest", []string{"latency_ms"}, map[string]result.Metric{"latency_ms": session("latency_ms", 10, 99, 1)})
			nw := pairOf("new", "pytest", []string{"latency_ms"}, map[string]result.Metric{"latency_ms": session("latency_ms", c.newCenter, 99, 2)})
			rep := Runs(old, nw, c.cfg)
			r := rowOf(t, rep, "latency_ms")
			if r.Verdict != c.verdict || rep.Failed() != c.failed || rep.Unknown != c.unknown {
				t.Errorf("verdict %s, failed %v, %d unknown; want %s, %v, %d (%+.1f%%, p=%.3g, threshold %g%% from %d runs)",
					r.Verdict, rep.Failed(), rep.Unknown, c.verdict, c.failed, c.unknown, r.Delta, r.P, r.Threshold, r.ThresholdRuns)
			}
			if c.threshold > 0 && r.Threshold != c.threshold {
				t.Errorf("threshold %g%%, want %g%%", r.Threshold, c.threshold)
			}
			if (c.threshold > 0 || c.thresholdN > 0) && r.ThresholdRuns != c.thresholdN {
				t.Errorf("threshold from %d runs, want %d", r.ThresholdRuns, c.thresholdN)
			}
			if c.cfg.Sessions != (r.Sessions != nil) {
				t.Errorf("Sessions %+v with Config.Sessions %v", r.Sessions, c.cfg.Sessions)
			}
			if c.unknown == 0 {
				if rep.Unresolved != "" || r.Mark() == "unknown" {
					t.Errorf("nothing unknown, but Unresolved %q, mark %q", rep.Unresolved, r.Mark())
				}
				return
			}
			runs := 0
			if c.cfg.History != nil {
				runs = len(c.cfg.History(nil, "latency_ms"))
			}
			for _, want := range []string{"not known", "b/default latency_ms +11.9% (threshold 5%, p=0.000 n=99+99; the smallest change these sessions could have seen: at least 5.0%)",
				"the store holds " + strconv.Itoa(runs) + " of the 10 sessions", "--baseline-ref REF", "--inferbench-measure instructions", "--strict"} {
				if !strings.Contains(rep.Unresolved, want) {
					t.Errorf("Unresolved lacks %q:\n%s", want, rep.Unresolved)
				}
			}
			if r.Mark() != "unknown" {
				t.Errorf("mark %q, want unknown", r.Mark())
			}
		})
	}
}

// Between sessions an improvement is judged as a regression is: one beyond the threshold that
// the sessions cannot tell (no learnt noise) is unknown, not an improvement, named in a warning;
// it fails nothing, --strict neither (it hides a regression no more than an unchanged row).
// Once the noise is learnt it is an improvement again. Before, a -12% between two sessions was
// an improvement however few sessions were stored, while a +12% was unknown.
func TestBetweenSessionsImprovementUnknown(t *testing.T) {
	plugin := Thresholds{}
	if err := plugin.Set("latency_ms=5"); err != nil {
		t.Fatal(err)
	}
	compareTo := func(center float64, cfg Config) (*Report, Row) {
		old := pairOf("old", "pytest", []string{"latency_ms"}, map[string]result.Metric{"latency_ms": session("latency_ms", 10, 99, 1)})
		nw := pairOf("new", "pytest", []string{"latency_ms"}, map[string]result.Metric{"latency_ms": session("latency_ms", center, 99, 2)})
		rep := Runs(old, nw, cfg)
		return rep, rowOf(t, rep, "latency_ms")
	}
	for _, strict := range []bool{false, true} {
		rep, r := compareTo(8.8, Config{Thresholds: plugin, Sessions: true, Strict: strict, History: history(9, 0.01)})
		if r.Verdict != Unknown || r.Mark() != "unknown" || !r.Unresolved() || !r.Improved() || rep.Improvements != 0 || rep.UnknownImprovements != 1 || rep.Unknown != 0 || rep.Failed() || rep.Unresolved != "" {
			t.Errorf("strict %v: -12%% between sessions, 9 stored: verdict %s mark %q, %d improvements, %d unknown improvements, %d unknown, failed %v, unresolved %q; want unknown, not an improvement, failing nothing",
				strict, r.Verdict, r.Mark(), rep.Improvements, rep.UnknownImprovements, rep.Unknown, rep.Failed(), rep.Unresolved)
		}
		w := strings.Join(rep.Warnings, "\n")
		for _, want := range []string{"not known: 1 gated improvement(s)", "b/default latency_ms -12.1%", "at least 5.0%", "9 of the 10 sessions"} {
			if !strings.Contains(w, want) {
				t.Errorf("warnings lack %q:\n%s", want, w)
			}
		}
	}
	for name, cfg := range map[string]Config{
		"within-run":            {Thresholds: plugin},
		"12 stored, quiet runs": {Thresholds: plugin, Sessions: true, History: history(12, 0.005)},
	} {
		if rep, r := compareTo(8.8, cfg); r.Verdict != Improvement || rep.Improvements != 1 || rep.UnknownImprovements != 0 {
			t.Errorf("%s: -12%%: verdict %s, %d improvements; want an improvement", name, r.Verdict, rep.Improvements)
		}
	}
}

// Between sessions, instruction counts are judged as they were: exact, not timed, so a count
// that grew 1% still fails and the same count passes, history or not.
func TestBetweenSessionsCounts(t *testing.T) {
	id := map[string]string{"valgrind": "3.19.0", "cpu": "AMD EPYC", "python": "3.11.2"}
	for _, cfg := range []Config{{}, {Sessions: true}} {
		rep := Runs(countedRun("a", id, repeat(1e6, 10)...), countedRun("b", id, repeat(1.01e6, 10)...), cfg)
		r := rowOf(t, rep, "instructions")
		if r.Verdict != Regression || !rep.Failed() || r.Sessions != nil || rep.Unknown != 0 {
			t.Errorf("Sessions %v: 1%% more instructions: verdict %s, failed %v, %d unknown; want a regression", cfg.Sessions, r.Verdict, rep.Failed(), rep.Unknown)
		}
		if rep := Runs(countedRun("a", id, repeat(1e6, 10)...), countedRun("b", id, repeat(1e6, 10)...), cfg); rep.Failed() || rep.Unknown != 0 {
			t.Errorf("Sessions %v: the same count failed or is unknown: %+v", cfg.Sessions, rep.Rows)
		}
	}
}

// driftPct sees a session that moved while it was measured, and not one that did not.
func TestDriftPct(t *testing.T) {
	steady := repeat(10, 50)
	moved := append(repeat(10, 25), repeat(11, 25)...)
	if d := driftPct(steady); d != 0 {
		t.Errorf("steady session: drift %.2f%%, want 0", d)
	}
	if d := driftPct(moved); d < 9.9 || d > 10.1 {
		t.Errorf("a session 10%% slower in its second half: drift %.2f%%, want 10%%", d)
	}
	if d := driftPct(repeat(10, 9)); d != 0 {
		t.Errorf("9 samples: drift %.2f%%, want 0 (too few for five blocks)", d)
	}
}
