package inferbench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
)

// TestKilledRunLeavesNoChild: when inferbench itself is killed (SIGKILL, the OOM killer), where
// it can clean nothing up, the processes it started die with it: an exec command, a Python
// worker in the middle of a call, and a server still starting. The command and the server used to
// run on, parented to init (a server holding its port, a command its GPU); the worker already
// left through its own watch of its parent (inferbench_worker.protocol), which this keeps.
func TestKilledRunLeavesNoChild(t *testing.T) {
	if os.Getenv("INFERBENCH_TEST_KILLED_ARGS") != "" {
		args := strings.Split(os.Getenv("INFERBENCH_TEST_KILLED_ARGS"), "\x1f")
		os.Exit(Run(args, Options{})) // the child: the command line
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir, pidFile string) []string // files written; returns the run's arguments
	}{
		{"exec", func(t *testing.T, dir, pidFile string) []string {
			return []string{"--exec", "echo $$ > " + pidFile + "; exec sleep 60", "--shell"}
		}},
		{"worker", func(t *testing.T, dir, pidFile string) []string {
			if _, err := exec.LookPath("python3"); err != nil {
				t.Skip("python3 is not on PATH")
			}
			write(t, filepath.Join(dir, "benches", "slow.py"), "import os, time\n"+
				"def benchmark_slow():\n"+
				"    open("+strconv.Quote(pidFile)+", 'w').write(str(os.getpid()))\n"+
				"    time.sleep(60)\n")
			return []string{filepath.Join(dir, "benches")}
		}},
		{"server", func(t *testing.T, dir, pidFile string) []string {
			write(t, filepath.Join(dir, "benches", "srv.yaml"), "name: srv\n"+
				"server:\n"+
				"  command: [sh, -c, 'echo $$ > "+pidFile+"; exec sleep 60']\n"+
				"  ready: tcp://127.0.0.1:{port}\n"+
				"  ready_timeout: 1m\n"+
				"subject: {kind: openai, url: 'http://127.0.0.1:{port}/v1', model: m}\n")
			return []string{filepath.Join(dir, "benches")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "child.pid")
			args := append([]string{"run", "--iterations", "1", "--warmup", "0", "--no-monitor", "--no-store",
				"--format", "none", "--output-dir", filepath.Join(dir, "out")}, tc.setup(t, dir, pidFile)...)
			cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRunLeavesNoChild$")
			cmd.Env = append(os.Environ(), "INFERBENCH_TEST_KILLED_ARGS="+strings.Join(args, "\x1f"), "CI=1")
			cmd.Dir = dir
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			var pid int
			for deadline := time.Now().Add(60 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the child process did not start")
				}
				data, _ := os.ReadFile(pidFile)
				pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
			}
			defer syscall.Kill(pid, syscall.SIGKILL)
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if syscall.Kill(pid, 0) != nil || zombie(pid) {
					return // gone, or killed and waiting for init to reap it
				}
				if time.Now().After(deadline) {
					t.Fatalf("process %d still runs after inferbench was killed", pid)
				}
			}
		})
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestKilledRunKeepsEveryFinishedScenario: a run of many fast scenarios killed in the middle
// (SIGKILL) keeps every scenario it had finished: run.json is rewritten only from time to time,
// and the journal beside it holds the rest, which result.Load reads back.
func TestKilledRunKeepsEveryFinishedScenario(t *testing.T) {
	if os.Getenv("INFERBENCH_TEST_KILLED_ARGS") != "" {
		args := strings.Split(os.Getenv("INFERBENCH_TEST_KILLED_ARGS"), "\x1f")
		os.Exit(Run(args, Options{}))
	}
	dir := t.TempDir()
	matrix := make([]string, 20000)
	for i := range matrix {
		matrix[i] = strconv.Itoa(i)
	}
	write(t, filepath.Join(dir, "benches", "many.yaml"), "name: many\nsubject: {kind: gofunc, func: inferbench/noop}\n"+
		"matrix:\n  a: ["+strings.Join(matrix[:200], ", ")+"]\n  b: ["+strings.Join(matrix[:50], ", ")+"]\n"+
		"load: {warmup_iterations: 0, measurement_iterations: 1}\n")
	out := filepath.Join(dir, "out")
	args := []string{"run", "--no-monitor", "--no-store", "--no-html-report", "--format", "none", "--output-dir", out, filepath.Join(dir, "benches")}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRunKeepsEveryFinishedScenario$")
	cmd.Env = append(os.Environ(), "INFERBENCH_TEST_KILLED_ARGS="+strings.Join(args, "\x1f"), "CI=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// Kill it once it has finished a few thousand of its 10,000 scenarios.
	var runDir string
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the run did not get far enough")
		}
		if runDir == "" {
			dirs, _ := filepath.Glob(filepath.Join(out, "2*"))
			if len(dirs) == 1 {
				runDir = dirs[0]
			}
			continue
		}
		if done := doneScenarios(t, runDir); done >= 3000 {
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	done := doneScenarios(t, runDir)
	r, err := result.Load(runDir)
	if err != nil {
		t.Fatal(err)
	}
	// run.log says "scenario done" just before the scenario is written: the last one may be
	// logged and not written when the kill comes.
	if !r.Partial || len(r.Scenarios) < done-1 || len(r.Scenarios) > done+1 || len(r.Scenarios) >= 10000 {
		t.Fatalf("killed after %d scenarios were done: loaded %d (partial %v)", done, len(r.Scenarios), r.Partial)
	}
	for i, s := range r.Scenarios {
		if s.Status != result.StatusOK || s.Metrics["latency_ms"].Summary == nil {
			t.Fatalf("scenario %d (%s): status %s, metrics %v", i, s.ID(), s.Status, s.Metrics)
		}
	}
	alone := -1
	if data, err := os.ReadFile(filepath.Join(runDir, result.RunFile)); err == nil {
		if rj, err := result.Decode(data, result.RunFile); err == nil {
			alone = len(rj.Scenarios)
		}
	}
	t.Logf("killed after %d scenarios were done; loaded %d (%d of them in run.json, the rest from the journal)", done, len(r.Scenarios), alone)
}

// doneScenarios counts the "scenario done" lines of a run's run.log.
func doneScenarios(t *testing.T, runDir string) int {
	data, _ := os.ReadFile(filepath.Join(runDir, result.LogFile))
	return strings.Count(string(data), `msg="scenario done"`)
}
