package cli

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// profiledRuns writes two runs of one command scenario, the new one 20% slower, each with the
// callgrind file of explain's testdata as its profile (the new one's grow function loops twice as
// long), or none with noProfile. It returns the two run folders.
func profiledRuns(t *testing.T, noProfile bool) (string, string) {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	paths := make([]string, 2)
	for i, f := range []float64{1, 1.2} {
		xs := make([]float64, 30)
		for j := range xs {
			xs[j] = 10 * f * (1 + 0.01*rng.NormFloat64())
		}
		s, _ := stats.Summarize(xs)
		m := result.NewMetric("latency_ms")
		m.Summary, m.Samples = &s, xs
		sc := result.Scenario{Benchmark: "cg", Scenario: "default", Subject: "exec", Status: result.StatusOK,
			Iterations: result.Iterations{Measured: 30}, Metrics: map[string]result.Metric{"latency_ms": m}}
		r := &result.Run{Schema: result.Schema, ID: []string{"20261101_000000-aaaaaaaa", "20261102_000000-bbbbbbbb"}[i],
			StartedAt: time.Date(2026, 11, 1+i, 0, 0, 0, 0, time.UTC), FinishedAt: time.Date(2026, 11, 1+i, 0, 1, 0, 0, time.UTC),
			Environment: map[string]any{}, Scenarios: []result.Scenario{sc}}
		paths[i] = filepath.Join(dir, r.ID)
		if !noProfile {
			src := []string{"callgrind.out.old", "callgrind.out.new"}[i]
			b, err := os.ReadFile(filepath.Join("..", "explain", "testdata", src))
			if err != nil {
				t.Fatal(err)
			}
			pdir := filepath.Join(paths[i], "profiles", "cg__default")
			if err := os.MkdirAll(pdir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(pdir, "callgrind.out"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			r.Scenarios[0].Profiles = []string{"profiles/cg__default/callgrind.out"}
		}
		r.Tally()
		if err := os.MkdirAll(paths[i], 0o755); err != nil {
			t.Fatal(err)
		}
		if err := result.Save(paths[i], r); err != nil {
			t.Fatal(err)
		}
	}
	return paths[0], paths[1]
}

// explain OLD NEW names the function that grew, with its share; compare prints the same section
// below the failed gate, in text and in the PR comment's markdown.
func TestExplainCommand(t *testing.T) {
	old, nw := profiledRuns(t, false)
	code, out, errOut := runCLI(t, "", nil, "explain", old, nw)
	if code != 0 {
		t.Fatalf("explain: exit %d, stderr %s", code, errOut)
	}
	head := "; explained 100%: `grow` +60k Ir per call (100%)"
	if !strings.Contains(out, head) || !strings.Contains(out, "callgrind, 1 and 1 chunks") {
		t.Errorf("explain output lacks %q:\n%s", head, out)
	}
	code, out, _ = runCLI(t, "", nil, "compare", old, nw)
	if code != 3 || !strings.Contains(out, "REGRESSION") || !strings.Contains(out, head) {
		t.Errorf("compare: exit %d, want 3 and the explanation below the verdict:\n%s", code, out)
	}
	_, md, _ := runCLI(t, "", nil, "compare", old, nw, "--format", "markdown")
	if !strings.Contains(md, "### Why") || !strings.Contains(md, "| `grow` | 60k Ir → 120k Ir |") {
		t.Errorf("markdown lacks the explanation:\n%s", md)
	}
	code, js, _ := runCLI(t, "", nil, "explain", old, nw, "--format", "json")
	if code != 0 || !strings.Contains(js, `"name": "grow"`) || strings.Contains(js, `"flame"`) {
		t.Errorf("explain --format json: exit %d\n%s", code, js)
	}
}

// Without profiles, the failed gate says how to get an explanation.
func TestExplainWithoutProfiles(t *testing.T) {
	old, nw := profiledRuns(t, true)
	code, out, _ := runCLI(t, "", nil, "compare", old, nw)
	if code != 3 || !strings.Contains(out, "not explained: the old run has no profile of cg/default: run both with --profile") {
		t.Errorf("compare: exit %d, want 3 and how to get profiles:\n%s", code, out)
	}
}

// In CI, compare appends the markdown comparison to $GITHUB_STEP_SUMMARY: a failed gate's
// explanation goes there too, below it.
func TestExplainStepSummary(t *testing.T) {
	old, nw := profiledRuns(t, false)
	summary := filepath.Join(t.TempDir(), "summary.md")
	code, _, errOut := runCLI(t, "", []string{"GITHUB_STEP_SUMMARY=" + summary}, "compare", old, nw)
	if code != 3 {
		t.Fatalf("compare: exit %d, want 3; stderr %s", code, errOut)
	}
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	if !strings.Contains(md, "1 regression(s)") || !strings.Contains(md, "### Why") || !strings.Contains(md, "| `grow` | 60k Ir → 120k Ir |") {
		t.Errorf("step summary lacks the comparison or its explanation:\n%s", md)
	}
}

// The README's `inferbench explain baseline:main latest`: a baseline read from the store is
// explained from its run folder under --results-dir (benchmark_results), where its profiles are;
// it failed with "the old run has no folder here" (issue 42). compare baseline:main explains too.
func TestExplainBaselineFromTheStore(t *testing.T) {
	old, nw := profiledRuns(t, false)
	project := t.TempDir()
	results := filepath.Join(project, "benchmark_results")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{old, nw} {
		if err := os.Rename(p, filepath.Join(results, filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
	}
	oldRel := filepath.Join("benchmark_results", filepath.Base(old))
	if code, _, errOut := runCLI(t, project, nil, "baseline", "set", "main", oldRel); code != 0 {
		t.Fatalf("baseline set: exit %d\n%s", code, errOut)
	}
	newRel := filepath.Join("benchmark_results", filepath.Base(nw))
	code, out, errOut := runCLI(t, project, nil, "explain", "baseline:main", newRel)
	head := "; explained 100%: `grow` +60k Ir per call (100%)"
	if code != 0 || !strings.Contains(out, head) {
		t.Fatalf("explain baseline:main: exit %d, want 0 with %q\n%s%s", code, head, out, errOut)
	}
	code, out, errOut = runCLI(t, project, nil, "compare", "baseline:main", newRel)
	if code != 3 || !strings.Contains(out, head) {
		t.Errorf("compare baseline:main: exit %d, want 3 with the explanation\n%s%s", code, out, errOut)
	}
}

// A profile that is there but cannot be read (here a callgrind file cut before its totals) is
// an error of explain, exit 1 naming the file, after the explanation; compare keeps its verdict
// (3) and says why below it. Before, the cut file read as a real -100%, exit 0.
func TestExplainUnreadableProfile(t *testing.T) {
	old, nw := profiledRuns(t, false)
	p := filepath.Join(nw, "profiles", "cg__default", "callgrind.out")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, b[:strings.Index(string(b), "totals:")], 0o644)
	code, out, errOut := runCLI(t, "", nil, "explain", old, nw)
	if code != 1 || !strings.Contains(errOut, p+": no totals: line") || !strings.Contains(out, "not explained") {
		t.Errorf("explain: exit %d, want 1 naming %s\n%s%s", code, p, out, errOut)
	}
	code, out, _ = runCLI(t, "", nil, "compare", old, nw)
	if code != 3 || !strings.Contains(out, "not explained: the new run's profile: "+p+": no totals: line") {
		t.Errorf("compare: exit %d, want 3 and why it is not explained:\n%s", code, out)
	}
}
