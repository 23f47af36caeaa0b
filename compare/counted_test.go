package compare

import (
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// countedRun is a run of one scenario counted in instruction mode with identity id.
func countedRun(runID string, id map[string]string, instructions ...float64) *result.Run {
	return &result.Run{ID: runID, Scenarios: []result.Scenario{{
		Benchmark: "tok", Scenario: "default", Subject: "exec", Status: result.StatusOK, Counted: id,
		Metrics: map[string]result.Metric{
			"instructions": {Unit: "count", Better: "lower", Samples: instructions},
			"latency_ms":   {Unit: "ms", Better: "lower", Samples: []float64{9, 10, 11, 10, 9, 10, 11, 10, 9, 10}},
		},
	}}}
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// Counts gate at their own threshold between equal identities, and are refused, with what
// differs, between different ones: another valgrind makes another count of the same code.
func TestCountedIdentity(t *testing.T) {
	id := map[string]string{"valgrind": "3.19.0", "cpu": "AMD EPYC", "python": "3.11.2"}
	other := map[string]string{"valgrind": "3.22.0", "cpu": "AMD EPYC", "python": "3.11.2"}
	base := repeat(1e6, 10)
	heavier := repeat(1.01e6, 10) // 1% more instructions

	rep := Runs(countedRun("a", id, base...), countedRun("b", id, heavier...), Config{})
	if !rep.Failed() || rep.Regressions != 1 {
		t.Fatalf("1%% more instructions, same identity: %d regressions, want the instructions row to fail: %+v", rep.Regressions, rep.Rows)
	}
	if gated := rowOf(t, rep, "latency_ms"); gated.Gated {
		t.Errorf("latency gates in instruction mode; only the count should")
	}
	if rep := Runs(countedRun("a", id, base...), countedRun("b", id, base...), Config{}); rep.Failed() {
		t.Errorf("the same count failed: %+v", rep.Rows)
	}

	rep = Runs(countedRun("a", id, base...), countedRun("b", other, heavier...), Config{})
	if rep.Failed() {
		t.Errorf("a count made under another valgrind failed the comparison: %+v", rep.Rows)
	}
	r := rowOf(t, rep, "instructions")
	if r.Verdict != Incomparable || !strings.Contains(strings.Join(r.Warnings, " "), "valgrind 3.19.0 → 3.22.0") {
		t.Errorf("row %s %v, want %s naming valgrind 3.19.0 → 3.22.0", r.Verdict, r.Warnings, Incomparable)
	}
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), "tok/default: instructions not compared: counted under a different identity (valgrind 3.19.0 → 3.22.0)") {
		t.Errorf("the report's warnings do not say why the count was not compared: %q", rep.Warnings)
	}
	if strings.Contains(strings.Join(rep.Warnings, "\n"), "single value") {
		t.Errorf("a refused count is reported as a single value: %q", rep.Warnings)
	}
}

func TestIdentityDiff(t *testing.T) {
	for _, c := range []struct {
		old, new map[string]string
		want     string
	}{
		{map[string]string{"valgrind": "3.19.0"}, map[string]string{"valgrind": "3.19.0"}, ""},               // equal
		{map[string]string{"torch": "2.1"}, map[string]string{"torch": "2.5"}, "torch 2.1 → 2.5"},            // an interpreter's library
		{map[string]string{"cpu": "A"}, map[string]string{"cpu": "A", "torch": "2.5"}, "torch (none) → 2.5"}, // a key only one has
		{nil, map[string]string{"valgrind": "3.19.0"}, "the old run was timed, not counted"},                 // timed against counted
		{map[string]string{"a": "1", "b": "1"}, map[string]string{"a": "2", "b": "2"}, "a 1 → 2; b 1 → 2"},   // every difference, sorted
	} {
		if got := identityDiff(c.old, c.new); got != c.want {
			t.Errorf("IdentityDiff(%v, %v) = %q, want %q", c.old, c.new, got, c.want)
		}
	}
}
