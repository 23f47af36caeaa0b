package ab

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/gitref"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
)

// Ctrl-C during a run against a ref (ctx cancelled): the run stops after the current block, keeps
// what it measured (run.json marked partial) and removes its temporary worktree.
func TestRefRunInterruptedRemovesWorktree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed:", err)
	}
	repo := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	def := "name: nap\nsubject: {kind: exec, command: [sleep, \"0.02\"]}\nload: {warmup_iterations: 0, measurement_iterations: 400}\n"
	if err := os.MkdirAll(filepath.Join(repo, "benches"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "benches", "nap.yaml"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "one")

	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	r, err := RefRun(ctx, RefOptions{Ref: "HEAD", Run: run.Options{Dir: repo, NoStore: true, NoHTMLReport: true, Format: "none",
		Env: []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp}}})
	if !errors.Is(err, run.ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("stopped %v after the start; 400 pairs of 20 ms calls were cut short at 1.5 s", took)
	}
	saved, lerr := result.Load(filepath.Join(repo, "benchmark_results", "latest"))
	if lerr != nil {
		t.Fatal(lerr)
	}
	if !saved.Partial || len(saved.Scenarios) != 1 || r == nil {
		t.Errorf("run.json partial %v with %d scenarios, want partial with nap/default", saved.Partial, len(saved.Scenarios))
	}
	if out := git("worktree", "list"); strings.Count(out, "\n") != 1 {
		t.Errorf("worktrees left:\n%s", out)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "inferbench-*"))
	if len(left) > 0 {
		t.Errorf("temporary folders left: %v", left)
	}
}

// refScenario is a scenario of a run against a ref whose latency_ms and cpu_ms blocks of 20
// pairs have the ratios B/A lat and cpu (with a little seeded noise), as RefRun records them.
func refScenario(t *testing.T, gate []string, lat, cpu float64) result.Scenario {
	t.Helper()
	blocks := func(ratio, base float64) []Block {
		var bs []Block
		for p := range 20 {
			wobble := 1 + 0.002*float64(p%5-2)
			bs = append(bs, Block{Pair: p, Variant: "A", N: 2, Median: base}, Block{Pair: p, Variant: "B", N: 2, Median: base * ratio * wobble})
		}
		return bs
	}
	th := 15.0
	l, err := Analyze(blocks(lat, 40), Options{Metric: "latency_ms", Threshold: &th})
	if err != nil {
		t.Fatal(err)
	}
	th25 := 25.0
	c, err := Analyze(blocks(cpu, 38), Options{Metric: "cpu_ms", Threshold: &th25})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(RefSection{Ref: "main", Commit: "abc", Result: l, CPU: c})
	if err != nil {
		t.Fatal(err)
	}
	return result.Scenario{Benchmark: "sum", Scenario: "default", Subject: "exec", Status: result.StatusOK, Gate: gate,
		Metrics: map[string]result.Metric{"latency_ms": result.SampleMetric("latency_ms", []float64{40, 41}), "cpu_ms": result.SampleMetric("cpu_ms", []float64{38, 39})},
		Extra:   result.Extra{Other: map[string]json.RawMessage{SectionBaselineRef: raw}}}
}

// A run against a ref follows compare's rules for a CPU-bound scenario: its cpu_ms gates beside
// latency_ms, a latency regression that the CPU time does not confirm is the machine's
// (disagree, not failing) unless the user named latency_ms, and a CPU time regression fails.
func TestRefReportWallAgainstCPU(t *testing.T) {
	wt := &gitref.Worktree{Ref: "main", Commit: "abc"}
	for _, c := range []struct {
		name     string
		gate     []string
		lat, cpu float64
		fails    bool
		latV     string
	}{
		// The wait for a core grew by 30%, the work did not: the machine moved.
		{"machine moved", nil, 1.30, 1.00, false, compare.Disagree},
		// Asked for wall time by name: a wait the code added fails.
		{"latency asked", []string{"latency_ms"}, 1.30, 1.00, true, compare.Regression},
		// The work grew by 30%, and the wall time with it.
		{"code slower", nil, 1.30, 1.30, true, compare.Regression},
		// The work grew by 30% (cpu_ms fails alone), the wall time not beyond its threshold.
		{"cpu alone", nil, 1.05, 1.30, true, compare.Worse},
	} {
		r := &result.Run{ID: "x", Scenarios: []result.Scenario{refScenario(t, c.gate, c.lat, c.cpu)}}
		r.Tally()
		rep := refReport(r, wt, RefOptions{})
		if len(rep.Rows) != 2 || rep.Rows[1].Metric != "cpu_ms" || !rep.Rows[1].Gated {
			t.Fatalf("%s: rows %+v, want latency_ms and a gated cpu_ms", c.name, rep.Rows)
		}
		if rep.Failed() != c.fails || rep.Rows[0].Verdict != c.latV {
			t.Errorf("%s: failed %v with latency_ms %s, want %v and %s (rows %+v)", c.name, rep.Failed(), rep.Rows[0].Verdict, c.fails, c.latV, rep.Rows)
		}
	}
}
