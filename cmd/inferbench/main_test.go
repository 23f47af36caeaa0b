package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/schematest"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
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

// TestExampleSuite runs the bundled example suite (what `make demo` runs) end to end with few
// iterations: every scenario must run or be skipped with a reason, and every subject kind that
// needs nothing absent must have run.
func TestExampleSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole example suite")
	}
	bin := demoBinary(t)
	tmp := t.TempDir()
	repo, _ := filepath.Abs("../..")
	cmd := exec.Command(bin, "run", "--enable-mock", "--iterations", "10", "--warmup", "1",
		"--output-dir", filepath.Join(tmp, "results"), "--format", "table")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CI=1", "INFERBENCH_STORE=sqlite:"+filepath.Join(tmp, "history.db"))
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	runErr := cmd.Run() // the run's log goes to stderr (CI is set): in the error, when it fails
	var out []byte
	if ee, ok := runErr.(*exec.ExitError); ok {
		out = ee.Stderr
	}
	data, err := os.ReadFile(filepath.Join(tmp, "results", "latest", "run.json"))
	if err != nil {
		t.Fatalf("%v; the run said: %v\n%s", err, runErr, tail(out, 3000))
	}
	if runErr != nil {
		t.Errorf("example suite: %v", runErr)
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
	if _, err := exec.Command(suite.DefaultPython, "-c", "import torch").CombinedOutput(); err == nil && ran["worker"] == 0 {
		t.Errorf("torch is importable but no worker scenario ran (ran: %v)", ran)
	}
	for _, f := range []string{"summary.csv", "run.log", "report.html"} {
		if _, err := os.Stat(filepath.Join(tmp, "results", "latest", f)); err != nil {
			t.Errorf("results folder lacks %s", f)
		}
	}
	checkGolden(t, "demo.golden", demoProjection(t, stdout.String(), data, hostDependent(t, repo)))
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
