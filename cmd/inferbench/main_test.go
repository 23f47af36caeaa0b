package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/schematest"
	"github.com/inferbench/inferbench/result"
)

// TestInterruptKeepsPartialResults runs the real binary, sends SIGINT once the first scenario is
// done, and checks that it stops, exits 1, and leaves a run.json marked partial that validates.
func TestInterruptKeepsPartialResults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "inferbench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
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
	cmd.Env = append(os.Environ(), "CI=1")
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
