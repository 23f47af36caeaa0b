package cli

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/internal/cli/ab"
	"github.com/inferbench/inferbench/result"
)

// cmdBench is a command benchmark whose every call runs script in a shell.
func cmdBench(script string) map[string]string {
	return shBench("cmd", script, "  warmup_iterations: 1\n")
}

// refSides reads the latest run in repo: its first scenario (the working tree's side) and that
// scenario's baseline_ref section (the ref's).
func refSides(t *testing.T, repo string) (result.Scenario, ab.RefSection) {
	t.Helper()
	r, err := result.Load(filepath.Join(repo, "benchmark_results", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	sc := r.Scenarios[0]
	var sec ab.RefSection
	if err := json.Unmarshal(sc.Extra.Other[ab.SectionBaselineRef], &sec); err != nil {
		t.Fatal(err)
	}
	return sc, sec
}

// A run against a ref samples each side's resources during its own blocks (issue 41: every run
// ability, the monitors among them): a command that sleeps at the ref and counts in a shell loop
// in the working tree gets the working tree's CPU time as the scenario's cpu_s and the ref's in
// its baseline_ref section, each its own (the loop's several times the sleep's), and each side
// the command's own peak RSS. inferbench's memory, which holds both sides, is left out and said
// so. Before, --monitor-interval, --grid-intensity and --pue were refused and nothing was
// sampled.
func TestBaselineRefSamplesEachSide(t *testing.T) {
	repo := gitRepo(t, cmdBench("sleep 0.03"), cmdBench("i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done"))
	code, stdout, stderr := runCLI(t, repo, nil, "run", "--baseline-ref", "HEAD~1", "--iterations", "20", "--no-store", "--no-html-report",
		"--monitor-interval", "10ms", "--grid-intensity", "300", "--pue", "1.2")
	if code != 0 && code != 3 {
		t.Fatalf("exit %d, want 0 or 3\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	sc, sec := refSides(t, repo)
	figure := func(side string, ms map[string]result.Metric, name string) float64 {
		t.Helper()
		m, ok := ms[name]
		if !ok || m.Value == nil {
			t.Fatalf("%s: no %s in %v", side, name, ms)
		}
		return *m.Value
	}
	loop, sleep := figure("working tree", sc.Metrics, "cpu_s"), figure("ref", sec.BaselineMetrics, "cpu_s")
	t.Logf("cpu_s: working tree %.3f, ref %.3f", loop, sleep)
	if !(loop > 2*sleep) {
		t.Errorf("cpu_s: working tree (a shell loop) %.3f s, ref (a sleep) %.3f s; want each side's own, the loop's several times the sleep's", loop, sleep)
	}
	for side, ms := range map[string]map[string]result.Metric{"working tree": sc.Metrics, "ref": sec.BaselineMetrics} {
		if v := figure(side, ms, "peak_rss_mb"); !(v > 0 && v < 50) {
			t.Errorf("%s: peak_rss_mb %.1f, want the command's own (a shell: a few MB)", side, v)
		}
		if _, ok := ms["rss_mean_mb"]; ok {
			t.Errorf("%s: rss_mean_mb reported: inferbench's memory is not a side's", side)
		}
	}
	for side, res := range map[string]*result.Resources{"working tree": sc.Extra.Resources, "ref": sec.BaselineResources} {
		if res == nil || res.Tree != "harness" || res.Grid.PUE != 1.2 || res.IntervalMS != 10 || !strings.Contains(strings.Join(res.Warnings, "\n"), "rss_mb") {
			t.Errorf("%s: extra.resources %+v, want the harness tree at 10 ms under the run's grid, saying what it left out", side, res)
		}
	}
}

// checkGoSides checks the resources of a Go function's run against a ref in repo: each side's
// blocks ran in a process of that side's binary, which sampled itself, so each side has its
// own peak RSS (the working tree's the scenario's, the ref's in its baseline_ref section).
func checkGoSides(t *testing.T, repo string) {
	t.Helper()
	sc, sec := refSides(t, repo)
	for side, ms := range map[string]map[string]result.Metric{"working tree": sc.Metrics, "ref": sec.BaselineMetrics} {
		if m, ok := ms["peak_rss_mb"]; !ok || m.Value == nil || !(*m.Value > 1) {
			t.Errorf("%s: peak_rss_mb %+v, want the block processes' own", side, m)
		}
	}
	if sc.Extra.Resources == nil || sec.BaselineResources == nil || sc.Extra.Resources.Samples == 0 {
		t.Errorf("extra.resources: working tree %+v, ref %+v; want each side's blocks sampled", sc.Extra.Resources, sec.BaselineResources)
	}
}

// A worker's side is its own processes: each side's worker is sampled during its blocks (tree
// subject), so each side has its own memory_mb, the peak of its worker process; no memory
// growth is fitted across the blocks (the worker is relaunched between them).
func TestBaselineRefSamplesWorkerSides(t *testing.T) {
	py := pyenv.Find(nil).Path
	if _, err := exec.LookPath(py); err != nil {
		t.Skipf("%s is not installed: worker processes cannot run", py)
	}
	repo := gitRepo(t, map[string]string{"benches/w.yaml": "name: w\nsubject: {kind: worker, adapter: noop}\nparams: {sleep_ms: 2}\n"})
	code, stdout, stderr := runCLI(t, repo, nil, "run", "--baseline-ref", "HEAD", "--iterations", "12", "--no-store", "--no-html-report")
	if code != 0 && code != 3 {
		t.Fatalf("exit %d, want 0 or 3\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	sc, sec := refSides(t, repo)
	for side, s := range map[string]struct {
		ms  map[string]result.Metric
		res *result.Resources
	}{"working tree": {sc.Metrics, sc.Extra.Resources}, "ref": {sec.BaselineMetrics, sec.BaselineResources}} {
		if m, ok := s.ms["memory_mb"]; !ok || m.Value == nil || !(*m.Value > 1) {
			t.Errorf("%s: memory_mb %+v, want its worker process's peak", side, m)
		}
		if m, ok := s.ms["rss_growth_mb"]; ok {
			t.Errorf("%s: rss_growth_mb %+v: a side's blocks are not one window of one process", side, m)
		}
		if s.res == nil || s.res.Tree != "subject" {
			t.Errorf("%s: extra.resources %+v, want the worker's own processes sampled", side, s.res)
		}
	}
}
