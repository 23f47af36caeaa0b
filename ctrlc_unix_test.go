//go:build unix

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
)

// The second Ctrl-C exits at once and leaves no child running. Before, an exec child (in its own
// process group, and running an iteration that the first Ctrl-C lets finish) survived the exit,
// parented to init.
func TestSecondCtrlCLeavesNoChild(t *testing.T) {
	if args := os.Getenv("INFERBENCH_TEST_RUN_ARGS"); args != "" {
		os.Exit(Run(strings.Split(args, "\x1f"), Options{})) // the child: the command line
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	args := []string{"run", "--exec", "echo $$ > " + pidFile + "; exec sleep 60", "--shell", "--iterations", "1", "--warmup", "0",
		"--no-monitor", "--no-store", "--format", "none", "--output-dir", filepath.Join(dir, "out")}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecondCtrlCLeavesNoChild$")
	cmd.Env = append(os.Environ(), "INFERBENCH_TEST_RUN_ARGS="+strings.Join(args, "\x1f"), "CI=1")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the exec child did not start")
		}
		data, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	cmd.Process.Signal(os.Interrupt)
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("inferbench after two Ctrl-C: %v, want exit 130", err)
	}
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil && !zombie(pid) {
			return // gone
		}
		if zombie(pid) {
			return // killed, waiting for init to reap it
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exec child %d still runs after inferbench exited", pid)
		}
	}
}

func zombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(data))
	return len(f) > 2 && f[2] == "Z"
}
