package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/cli/ab"
	"github.com/inferbench/inferbench/internal/testkit/mlflowtest"
	"github.com/inferbench/inferbench/internal/testkit/otlptest"
	"github.com/inferbench/inferbench/internal/testkit/schematest"
	"github.com/inferbench/inferbench/result"
)

// gitRepo makes a git repository in a temporary directory with one commit per entry of commits:
// the files of each (path -> content) written, then committed. It returns the repository.
func gitRepo(t *testing.T, commits ...map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed:", err)
	}
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	for i, files := range commits {
		writeFiles(t, dir, files)
		gitIn(t, dir, "add", "-A")
		gitIn(t, dir, "commit", "-q", "-m", "commit "+string(rune('1'+i)))
	}
	return dir
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// sleepBench is a command benchmark whose every call sleeps for secs. 30 calls a side are 20
// pairs of blocks: with 10 pairs of single calls, one call delayed by a loaded machine (load
// average 15 on 2 cores) hid a 2x change (p = 0.05).
func sleepBench(secs string) map[string]string {
	return map[string]string{"benches/nap.yaml": `name: nap
subject:
  kind: exec
  command: ["sleep", "` + secs + `"]
load:
  warmup_iterations: 1
  measurement_iterations: 30
`}
}

// checkNoWorktree fails when a run left its temporary worktree registered in repo.
func checkNoWorktree(t *testing.T, repo string) {
	t.Helper()
	if out := gitIn(t, repo, "worktree", "list"); strings.Count(out, "\n") != 1 {
		t.Errorf("worktrees left after the run:\n%s", out)
	}
}

// The reproduction of issue 31's "a baseline run beside you": a command benchmark made 2x slower
// in the last commit is a regression against HEAD~1, measured interleaved in one job (exit 3);
// the run names the ref and its commit, and removes its worktree.
func TestBaselineRefFindsRegression(t *testing.T) {
	repo := gitRepo(t, sleepBench("0.01"), sleepBench("0.02"))
	code, stdout, stderr := runCLI(t, repo, nil, "run", "--baseline-ref", "HEAD~1", "--no-store", "--no-html-report")
	if code != 3 {
		t.Fatalf("exit %d, want 3 (regression)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	refCommit := strings.TrimSpace(gitIn(t, repo, "rev-parse", "HEAD~1"))
	if !strings.Contains(stdout, "REGRESSION") || !strings.Contains(stdout, "HEAD~1 @ "+refCommit[:10]) || !strings.Contains(stderr, "HEAD~1") {
		t.Errorf("the output does not show the regression against HEAD~1 @ %s:\nstdout:\n%s\nstderr:\n%s", refCommit[:10], stdout, stderr)
	}
	r, err := result.Load(filepath.Join(repo, "benchmark_results", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	if got := result.EnvValue(r.Environment, ab.SectionBaselineRef, "commit"); got != refCommit {
		t.Errorf("run.json environment.baseline_ref.commit = %v, want %s", got, refCommit)
	}
	if len(r.Scenarios) != 1 || r.Scenarios[0].Extra.Other[ab.SectionBaselineRef] == nil {
		t.Fatalf("run.json scenarios: %+v, want nap/default with a baseline_ref section", r.Scenarios)
	}
	if _, err := os.Stat(filepath.Join(repo, "benchmark_results", "latest", "compare.json")); err != nil {
		t.Error(err)
	}
	data, err := os.ReadFile(filepath.Join(repo, "benchmark_results", "latest", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	schematest.ValidateRun(t, data)
	checkNoWorktree(t, repo)
}

// The same commit on both sides passes (exit 0); an uncommitted change of the working tree is
// what is measured against the ref (a dirty working tree is the side under test); a budget the
// working tree exceeds fails as in any run.
func TestBaselineRefSameCommitAndDirtyTree(t *testing.T) {
	repo := gitRepo(t, sleepBench("0.01"))
	code, stdout, stderr := runCLI(t, repo, nil, "run", "--baseline-ref", "HEAD", "--no-store", "--no-html-report")
	if code != 0 {
		t.Fatalf("same commit: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	writeFiles(t, repo, sleepBench("0.02"))
	code, stdout, stderr = runCLI(t, repo, nil, "run", "--baseline-ref", "HEAD", "--no-store", "--no-html-report")
	if code != 3 || !strings.Contains(stdout, "uncommitted changes") {
		t.Fatalf("uncommitted 2x slowdown: exit %d, want 3 and the working tree marked as changed\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// The same code with a budget it exceeds: exit 3 as in any run.
	budget := sleepBench("0.01")
	budget["benches/nap.yaml"] += "budgets:\n  latency_ms.p50: \"<= 1\"\n"
	writeFiles(t, repo, budget)
	code, stdout, stderr = runCLI(t, repo, nil, "run", "--baseline-ref", "HEAD", "--no-store", "--no-html-report")
	if code != 3 || !strings.Contains(stdout, "BUDGET EXCEEDED") {
		t.Fatalf("exceeded budget: exit %d, want 3\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	checkNoWorktree(t, repo)
}

// A ref that does not resolve, and a scenario the ref lacks, are usage errors that name them;
// nothing is measured and no worktree is left.
func TestBaselineRefErrors(t *testing.T) {
	repo := gitRepo(t, sleepBench("0.01"), map[string]string{"benches/extra.yaml": "name: extra\nsubject: {kind: exec, command: [\"true\"]}\n"})
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		// A typo in the ref: named, with the hint about shallow clones.
		{"bad ref", []string{"--baseline-ref", "no-such-branch"}, []string{"no-such-branch", "not a commit", "fetch"}},
		// The benchmark was added after the ref: it has no baseline.
		{"absent at ref", []string{"--baseline-ref", "HEAD~1"}, []string{"extra/default", "is not at HEAD~1"}},
		// Options are not a ref.
		{"option as ref", []string{"--baseline-ref=--all"}, []string{"--all", "not a commit"}},
	} {
		code, stdout, stderr := runCLI(t, repo, nil, append([]string{"run", "--no-store"}, c.args...)...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2\nstdout:\n%s\nstderr:\n%s", c.name, code, stdout, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: the error does not say %q:\n%s", c.name, w, stderr)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "benchmark_results")); err == nil {
		t.Error("a run folder was written for a run that could not start")
	}
	checkNoWorktree(t, repo)
	// Outside a repository.
	code, _, stderr := runCLI(t, t.TempDir(), nil, "run", "--baseline-ref", "HEAD", "--exec", "true", "--no-store")
	if code != 2 || !strings.Contains(stderr, "not in a git repository") {
		t.Errorf("outside a repository: exit %d, stderr:\n%s", code, stderr)
	}
}

// A Go function benchmark at the ref is built there: a tiny main package that uses this module
// (a replace directive to the checkout) registers a function made 8x heavier in its last commit (the machine may be loaded: the effect is large).
func TestBaselineRefGoFunction(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not installed:", err)
	}
	if testing.Short() {
		t.Skip("builds two benchmark binaries: not in -short")
	}
	_, file, _, _ := runtime.Caller(0)
	checkout := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	sum, err := os.ReadFile(filepath.Join(checkout, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	mod := "module example.com/tiny\n\ngo 1.26\n\nrequire github.com/inferbench/inferbench v0.0.0\n\nreplace github.com/inferbench/inferbench => " + checkout + "\n"
	main := func(n string) string {
		return `package main

import (
	"context"

	"github.com/inferbench/inferbench"
)

var sink uint64

func main() {
	inferbench.Register("spin", func(context.Context) error {
		for i := uint64(0); i < ` + n + `; i++ {
			sink = sink*31 + i
		}
		return nil
	})
	inferbench.Main()
}
`
	}
	goEnv := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	build := func(dir string) string {
		t.Helper()
		bin := filepath.Join(t.TempDir(), "bench")
		cmd := exec.Command(goBin, "build", "-o", bin, ".")
		cmd.Dir, cmd.Env = dir, goEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("cannot build the tiny benchmark module offline here: %v\n%s", err, out)
		}
		return bin
	}
	repo := gitRepo(t)
	writeFiles(t, repo, map[string]string{"go.mod": mod, "go.sum": string(sum), "main.go": main("100000")})
	build(repo) // completes go.mod's requirements before the first commit
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "-q", "-m", "one")
	writeFiles(t, repo, map[string]string{"main.go": main("800000")})
	gitIn(t, repo, "commit", "-q", "-am", "two: eight times the work")
	bin := build(repo)

	cmd := exec.Command(bin, "run", "--baseline-ref", "HEAD~1", "--include", "spin", "--iterations", "10", "--warmup", "1", "--no-store", "--no-html-report")
	cmd.Dir, cmd.Env = repo, append(goEnv, "CI=1")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 3 || !strings.Contains(string(out), "spin/default") || !strings.Contains(string(out), "REGRESSION") {
		t.Fatalf("Go function 8x heavier than at HEAD~1: exit %d, want 3\n%s", code, out)
	}
	checkGoSides(t, repo)
	checkNoWorktree(t, repo)

	// A ref whose program does not compile: exit 1, the ref and the compiler's error named,
	// nothing left behind.
	writeFiles(t, repo, map[string]string{"main.go": "package main\n\nfunc main() { undefinedCall() }\n"})
	gitIn(t, repo, "commit", "-q", "-am", "three: broken")
	gitIn(t, repo, "tag", "broken")
	gitIn(t, repo, "reset", "-q", "--hard", "HEAD~1")
	cmd = exec.Command(bin, "run", "--baseline-ref", "broken", "--include", "spin", "--no-store", "--no-monitor")
	cmd.Dir, cmd.Env = repo, append(goEnv, "CI=1")
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "broken") || !strings.Contains(string(out), "undefinedCall") {
		t.Errorf("a ref that does not build: %v, want exit 1 naming the ref and the compiler's error\n%s", err, out)
	}
	checkNoWorktree(t, repo)
}

// loopBench is a command benchmark whose every call counts to n in a shell loop: its
// instructions grow with n.
func loopBench(n string) map[string]string {
	return shBench("loop", "i=0; while [ $i -lt "+n+" ]; do i=$((i+1)); done", "  warmup_iterations: 0\n  measurement_iterations: 2\n")
}

// shBench is the command benchmark name whose every call runs script in a shell, under load (the
// lines of its load: block).
func shBench(name, script, load string) map[string]string {
	return map[string]string{"benches/" + name + ".yaml": "name: " + name + "\nsubject:\n  kind: exec\n  command: [\"sh\", \"-c\", \"" + script + "\"]\nload:\n" + load}
}

// The reproduction of issue 41's `run --baseline-ref HEAD --measure instructions`, which exited
// 0 having measured time: both sides are counted under callgrind in the one job, and a 10%
// heavier loop is an exact regression (exit 3) whose run.json holds the counts of both sides;
// the same commit passes.
func TestBaselineRefCountsInstructions(t *testing.T) {
	if _, err := exec.LookPath("valgrind"); err != nil {
		t.Skip("valgrind is not installed (instruction mode):", err)
	}
	repo := gitRepo(t, loopBench("2000"), loopBench("2200"))
	code, stdout, stderr := runCLI(t, repo, nil, "run", "--baseline-ref", "HEAD~1", "--measure", "instructions", "--no-store", "--no-html-report")
	if code != 3 || !strings.Contains(stdout, "counted under callgrind") {
		t.Fatalf("10%% more work, counted: exit %d, want 3\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r, err := result.Load(filepath.Join(repo, "benchmark_results", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Scenarios) != 1 {
		t.Fatalf("run.json scenarios: %+v", r.Scenarios)
	}
	sc := r.Scenarios[0]
	var sec ab.RefSection
	if err := json.Unmarshal(sc.Extra.Other[ab.SectionBaselineRef], &sec); err != nil || sec.Counted == nil {
		t.Fatalf("the baseline_ref section holds no counted scenario: %v %s", err, sc.Extra.Other[ab.SectionBaselineRef])
	}
	newN, oldN := sc.Metrics["instructions"].Samples, sec.Counted.Metrics["instructions"].Samples
	if len(newN) == 0 || len(oldN) == 0 || !(newN[0] > oldN[0]*1.05) {
		t.Errorf("instructions: working tree %v, ref %v; want the working tree's about 10%% more", newN, oldN)
	}
	code, stdout, stderr = runCLI(t, repo, nil, "run", "--baseline-ref", "HEAD", "--measure", "instructions", "--no-store", "--no-html-report")
	if code != 0 {
		t.Fatalf("same commit, counted: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// The same code counts the same on both sides, to the instruction: the ref's worktree has the
	// working tree's path length (a shell counted 0.56% fewer in a longer one: its PWD moved
	// where its strings lay), with this test's repository as deep as a CI checkout's.
	if r, err = result.Load(filepath.Join(repo, "benchmark_results", "latest")); err != nil {
		t.Fatal(err)
	}
	sec = ab.RefSection{}
	if err := json.Unmarshal(r.Scenarios[0].Extra.Other[ab.SectionBaselineRef], &sec); err != nil || sec.Counted == nil {
		t.Fatalf("same commit: no counted ref: %v", err)
	}
	if got, ref := r.Scenarios[0].Metrics["instructions"].Samples, sec.Counted.Metrics["instructions"].Samples; len(got) == 0 || !slices.Equal(got, ref) {
		t.Errorf("same commit: instructions %v in the working tree, %v at the ref; want equal", got, ref)
	}
	checkNoWorktree(t, repo)
}

// A flag a run against a ref does not do is refused, naming it and why; none is ignored.
func TestBaselineRefRefusesWhatItDoesNotDo(t *testing.T) {
	repo := gitRepo(t, sleepBench("0.01"))
	for _, flag := range [][]string{{"--monitor-overhead"}, {"--keep-samples", "5"}, {"--min-time", "1s"}} {
		code, _, stderr := runCLI(t, repo, nil, append([]string{"run", "--baseline-ref", "HEAD", "--no-store"}, flag...)...)
		if code != 2 || !strings.Contains(stderr, flag[0]) {
			t.Errorf("--baseline-ref with %s: exit %d, want 2 naming it\n%s", flag[0], code, stderr)
		}
	}
}

// A run against a ref is a run: its alerts are evaluated (the judge stage's) and its run.log
// written, as for any run.
func TestBaselineRefIsARun(t *testing.T) {
	repo := gitRepo(t, sleepBench("0.01"))
	code, stdout, stderr := runCLI(t, repo, nil, "run", "--baseline-ref", "HEAD", "--no-store", "--no-html-report", "--alert", "latency_ms.p50 > 0", "--log-level", "info")
	if code != 0 || !strings.Contains(stderr, "ALERT") {
		t.Fatalf("exit %d, want 0 with the alert fired\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	log, err := os.ReadFile(filepath.Join(repo, "benchmark_results", "latest", result.LogFile))
	if err != nil || !strings.Contains(string(log), "scenario done") {
		t.Errorf("run.log: %v\n%s", err, log)
	}
}

// A run against a ref takes the run's own abilities with no code of its own: its scenarios are
// traced (--otlp-endpoint), exported (--export mlflow) and followed by the live view
// (--metrics-addr), as any run's. Before, each flag was refused.
func TestBaselineRefTracedExportedLive(t *testing.T) {
	repo := gitRepo(t, sleepBench("0.01"))
	rc, otlpURL := otlptest.Start(t)
	srv := mlflowtest.Start(t)
	env := []string{"MLFLOW_TRACKING_URI=" + srv.URL}
	code, stdout, stderr := runCLI(t, repo, env, "run", "--baseline-ref", "HEAD", "--no-store", "--no-html-report",
		"--otlp-endpoint", otlpURL+"/v1/traces", "--export", "mlflow", "--metrics-addr", "127.0.0.1:0")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	names := map[string]bool{}
	for _, s := range rc.Spans() {
		names[s.Name] = true
	}
	if len(names) == 0 {
		t.Error("no span received from the run against a ref")
	}
	runs := srv.Runs()
	if len(runs) == 0 {
		t.Fatal("no MLflow run received from the run against a ref")
	}
	found := false
	for _, r := range runs {
		for k := range r.Metrics {
			found = found || strings.Contains(k, "latency_ms")
		}
	}
	if !found {
		t.Errorf("the exported runs carry no latency_ms: %+v", runs)
	}
}
