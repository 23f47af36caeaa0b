package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/internal/testkit/schematest"
	"github.com/inferbench/inferbench/result"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// build compiles the inferbench binary once per test process.
func build(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "inferbench-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "inferbench")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// budgetsOnly is stderr's last word when the run's only failure is a budget exceeded.
var budgetsOnly = regexp.MustCompile(`inferbench: 0 regressions, \d+ budgets exceeded\n$`)

// demoArgs is what `make demo` runs (the Makefile's demo recipe, checked by TestExampleSuite).
var demoArgs = []string{"run", "--enable-mock", "benches"}

// TestExampleSuite runs exactly what `make demo` runs, piped, on a copy of the bundled example
// suite (so that the results folder lands in a temporary folder): every scenario must run or be
// skipped with a reason, every subject kind that needs nothing absent must have run, stderr
// carries no INFO or DEBUG line, and stdout and run.json match the golden projection.
func TestExampleSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole example suite")
	}
	repo, _ := filepath.Abs("../..")
	checkDemoRecipe(t, filepath.Join(repo, "Makefile"))
	bin := demoBinary(t)
	tmp := t.TempDir()
	if err := os.CopyFS(filepath.Join(tmp, "benches"), os.DirFS(filepath.Join(repo, "benches"))); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, demoArgs...)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "INFERBENCH_STORE=sqlite:"+filepath.Join(tmp, "history.db"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr // pipes, as `make demo | tee` or CI
	runErr := cmd.Run()
	results := filepath.Join(tmp, "benchmark_results", "latest")
	data, err := os.ReadFile(filepath.Join(results, "run.json"))
	if err != nil {
		t.Fatalf("%v; the run said: %v\n%s", err, runErr, tail(stderr.Bytes(), 3000))
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) && ee.ExitCode() == 3 && budgetsOnly.Match(stderr.Bytes()) {
		// The example's budgets are on latencies: a loaded machine exceeds them (exit 3),
		// which is the tool working, not a change of its output.
		t.Logf("example suite: %v (budgets exceeded on this machine now)\n%s", runErr, stderr.String())
	} else if runErr != nil {
		t.Errorf("example suite: %v\n%s", runErr, tail(stderr.Bytes(), 3000))
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "level=INFO") || strings.Contains(line, "level=DEBUG") {
			t.Errorf("stderr of the piped demo has an INFO or DEBUG line (the full log belongs in run.log): %s", line)
		}
	}
	schematest.ValidateRun(t, data)
	var r result.Run
	json.Unmarshal(data, &r)
	ran := map[string]int{}
	for _, s := range r.Scenarios {
		switch s.Status {
		case result.StatusFailed:
			t.Errorf("%s failed: %s", s.ID(), s.Error)
		case result.StatusSkipped:
			if s.SkipReason == "" {
				t.Errorf("%s skipped without a reason", s.ID())
			}
		case result.StatusOK:
			ran[s.Subject]++
		}
	}
	for _, kind := range []string{"exec", "gofunc", "mock", "openai"} {
		if ran[kind] == 0 {
			t.Errorf("no %s scenario ran (ran: %v)", kind, ran)
		}
	}
	if _, err := exec.Command(pyenv.Fallback, "-c", "import torch").CombinedOutput(); err == nil && ran["worker"] == 0 {
		t.Errorf("torch is importable but no worker scenario ran (ran: %v)", ran)
	}
	for _, f := range []string{"summary.csv", "run.log", "report.html"} {
		if _, err := os.Stat(filepath.Join(results, f)); err != nil {
			t.Errorf("results folder lacks %s", f)
		}
	}
	checkGolden(t, "demo.golden", demoProjection(t, stdout.String(), data, hostDependent(t, filepath.Join(tmp, "benches"))))
}

// checkDemoRecipe fails when the Makefile's demo recipe is no longer `./$(BIN) ` + demoArgs.
func checkDemoRecipe(t *testing.T, makefile string) {
	t.Helper()
	b, err := os.ReadFile(makefile)
	if err != nil {
		t.Fatal(err)
	}
	// The recipe is the tab-indented lines after "demo:"; the one that runs the binary (after the
	// build and its progress lines) must be demoArgs, with or without make's @.
	_, after, ok := strings.Cut(string(b), "\ndemo:")
	want := "./$(BIN) " + strings.Join(demoArgs, " ")
	runs := 0
	for _, line := range strings.Split(after, "\n")[1:] {
		if !strings.HasPrefix(line, "\t") {
			break
		}
		if cmd := strings.TrimPrefix(strings.TrimSpace(line), "@"); strings.HasPrefix(cmd, "./$(BIN) ") {
			if cmd != want {
				t.Fatalf("the Makefile's demo recipe runs %q, not %q: update demoArgs (TestExampleSuite runs what make demo runs)", cmd, want)
			}
			runs++
		}
	}
	if !ok || runs != 1 {
		t.Fatalf("the Makefile's demo recipe should run %q once, found %d: update demoArgs (TestExampleSuite runs what make demo runs)", want, runs)
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// TestInterruptKeepsPartialResults runs the real binary, sends SIGINT once the first scenario is
// done, and checks that it stops, exits 1, and leaves a run.json marked partial that validates.
func TestInterruptKeepsPartialResults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	tmp := t.TempDir()
	bin := build(t)
	benches := filepath.Join(tmp, "benches")
	os.MkdirAll(benches, 0o755)
	os.WriteFile(filepath.Join(benches, "slow.yaml"), []byte(`name: first
subject: {kind: mock, latency_ms: 1}
load: {warmup_iterations: 0, measurement_iterations: 3}
---
name: slow
subject: {kind: mock, latency_ms: 20, jitter: 0.01}
matrix:
  batch_size: [1, 2, 3, 4]
load: {warmup_iterations: 0, measurement_iterations: 10000}
`), 0o644)
	out := filepath.Join(tmp, "results")
	cmd := exec.Command(bin, "run", "--enable-mock", "--output-dir", out, "--format", "none", "--include", "first", "--include", "slow")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "CI=1", "INFERBENCH_STORE=sqlite:"+filepath.Join(tmp, "history.db"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the first scenario's result is on disk, then interrupt the second.
	deadline := time.Now().Add(30 * time.Second)
	var dir string
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(out)
		for _, e := range entries {
			if e.IsDir() {
				dir = filepath.Join(out, e.Name())
			}
		}
		if dir != "" {
			if r, err := result.Load(dir); err == nil && len(r.Scenarios) >= 1 {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // into the slow scenario's iterations
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	schematest.ValidateRun(t, data)
	var r result.Run
	json.Unmarshal(data, &r)
	if !r.Partial {
		t.Errorf("run.json not marked partial")
	}
	if len(r.Scenarios) != 2 {
		t.Fatalf("%d scenarios in run.json, want the finished one and the interrupted one", len(r.Scenarios))
	}
	slow := r.Scenarios[1]
	if slow.Iterations.Measured == 0 || slow.Iterations.Measured >= 10000 || slow.Metrics["latency_ms"].Summary == nil {
		t.Errorf("interrupted scenario kept %d iterations", slow.Iterations.Measured)
	}
}
