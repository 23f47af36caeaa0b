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

// mobileRuns writes seed 002's mobile_inference twice, unchanged but for what the issue saw move
// between the two runs: peak_rss_mb +50.6% (one value) and harness_latency_ms +50.9%. It returns
// the two run folders.
func mobileRuns(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(2, 2))
	dist := func(name string, center float64) result.Metric {
		xs := make([]float64, 30)
		for i := range xs {
			xs[i] = center * (1 + 0.01*rng.NormFloat64())
		}
		s, _ := stats.Summarize(xs)
		m := result.NewMetric(name)
		m.Summary, m.Samples = &s, xs
		return m
	}
	paths := make([]string, 2)
	for i, f := range []float64{1, 1.506} {
		rss := 48 * f
		peak := result.NewMetric("peak_rss_mb")
		peak.Value = &rss
		r := &result.Run{Schema: result.Schema, ID: []string{"20261101_000000-aaaaaaaa", "20261102_000000-bbbbbbbb"}[i],
			StartedAt: time.Date(2026, 11, 1+i, 0, 0, 0, 0, time.UTC), FinishedAt: time.Date(2026, 11, 1+i, 0, 1, 0, 0, time.UTC), Environment: map[string]any{},
			Scenarios: []result.Scenario{{Benchmark: "mobile_inference", Scenario: "default", Subject: "worker", Status: result.StatusOK,
				Iterations: result.Iterations{Measured: 30},
				Metrics: map[string]result.Metric{"latency_ms": dist("latency_ms", 25), "harness_latency_ms": dist("harness_latency_ms", 1.1*f),
					"peak_rss_mb": peak}}}}
		r.Tally()
		paths[i] = filepath.Join(dir, r.ID)
		if err := os.MkdirAll(paths[i], 0o755); err != nil {
			t.Fatal(err)
		}
		if err := result.Save(paths[i], r); err != nil {
			t.Fatal(err)
		}
	}
	return paths[0], paths[1]
}

// Seed 002's unchanged mobile_inference got ❌ in the PR markdown from peak_rss_mb and
// harness_latency_ms, beside a latency of "~", and compare exited 3. Now those figures are shown
// as information and the comparison passes; --gate makes one of them fail it.
func TestCompareGatesOnPrimaryMetrics(t *testing.T) {
	old, nw := mobileRuns(t)
	code, out, errOut := runCLI(t, "", nil, "compare", old, nw, "--format", "markdown")
	if code != ExitOK || !strings.Contains(out, "✅ no regression") || strings.Contains(out, "❌") || !strings.Contains(out, "harness_latency_ms") {
		t.Errorf("compare --format markdown of an unchanged worker: exit %d, want 0, ✅ and the moved figures listed as information\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", nil, "compare", old, nw)
	if code != ExitOK || !strings.Contains(out, "info: beyond limit") {
		t.Errorf("compare (text): exit %d, want 0 with the moved figures marked info\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", nil, "compare", old, nw, "--gate", "harness_latency_ms")
	if code != ExitRegression || !strings.Contains(out, "REGRESSION") {
		t.Errorf("compare --gate harness_latency_ms: exit %d, want 3\n%s%s", code, out, errOut)
	}
	// A single value never fails, gated or not.
	code, out, errOut = runCLI(t, "", nil, "compare", old, nw, "--gate", "peak_rss_mb")
	if code != ExitOK || !strings.Contains(out, "untested") {
		t.Errorf("compare --gate peak_rss_mb (one value): exit %d, want 0 with the change untested\n%s%s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, "", nil, "compare", old, nw, "--gate", "peak rss")
	if code != ExitUsage || !strings.Contains(errOut, "--gate") {
		t.Errorf("compare --gate 'peak rss': exit %d, want 2 naming --gate\n%s", code, errOut)
	}
}

// A definition's gate: reaches run.json and the verdict: a figure the command reports itself
// (work_ms, doubled between the runs) fails the comparison by default, being the user's own
// measure with a known direction, and when gate: names it; a gate: list without it decides
// alone.
func TestDefinitionGateThroughRun(t *testing.T) {
	for _, c := range []struct {
		gate string // the definition's gate: line
		want int
	}{{"", ExitRegression}, {"gate: [work_ms]\n", ExitRegression}, {"gate: [latency_ms]\n", ExitOK}} {
		dir := t.TempDir()
		def := "name: g\nsubject: {kind: exec, command: [sh, -c, 'echo \"{\\\"work_ms\\\": ${W}}\"'], metrics: json}\nmetrics: {work_ms: {unit: ms, better: lower}}\n" + c.gate
		runs := runTwice(t, dir, def, "W", "10", "20")
		r, err := result.Load(runs[1])
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(r.Scenarios[0].Gate, ","), strings.TrimSuffix(strings.TrimPrefix(c.gate, "gate: ["), "]\n"); got != want {
			t.Errorf("%q: run.json's scenario gate %q, want %q", c.gate, got, want)
		}
		// Wall and CPU time both out of the way (a CPU-bound command's cpu_ms gates beside its
		// latency, and `sh -c echo` moved +30% under load): the user's figure decides.
		code, out, errOut := runCLI(t, dir, nil, "compare", runs[0], runs[1], "--threshold", "latency_ms=100000", "--threshold", "cpu_ms=100000")
		if code != c.want {
			t.Errorf("%q: compare work_ms 10 → 20: exit %d, want %d\n%s%s", c.gate, code, c.want, out, errOut)
		}
	}
}

// runTwice writes definition def to dir/benches/g.yaml and runs it twice, with env var v set to
// each of the two values, returning the runs' folders.
func runTwice(t *testing.T, dir, def, v string, values ...string) []string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "benches"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "benches", "g.yaml"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := make([]string, len(values))
	for i, w := range values {
		out := filepath.Join(dir, "out"+w)
		code, _, errOut := runCLI(t, dir, []string{v + "=" + w}, "run", "--no-monitor", "--iterations", "12", "--warmup", "0", "--output-dir", out, "--format", "none", "--no-store")
		if code != ExitOK {
			t.Fatalf("run %s=%s: exit %d\n%s", v, w, code, errOut)
		}
		runs[i] = filepath.Join(out, result.LatestLink)
	}
	return runs
}

// The reproduction: a command printing {"throughput": 800}, then 600 (−24.7%,
// p = 0.000), showed "info: beyond limit (−10%), not gated" and exited 0. Throughput is the
// user's own figure, higher-is-better by its name: exit 3.
func TestOwnThroughputGatesThroughRun(t *testing.T) {
	dir := t.TempDir()
	def := "name: g\nsubject: {kind: exec, command: [sh, -c, 'echo \"{\\\"throughput\\\": ${T}}\"'], metrics: json}\n"
	runs := runTwice(t, dir, def, "T", "800", "600")
	code, out, errOut := runCLI(t, dir, nil, "compare", runs[0], runs[1], "--threshold", "latency_ms=100000")
	if code != ExitRegression || !strings.Contains(out, "REGRESSION") {
		t.Errorf("throughput 800 → 600: exit %d, want 3 with a regression\n%s%s", code, out, errOut)
	}
}
