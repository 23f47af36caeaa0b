//go:build unix

package exec

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/inferbench/inferbench/subject"
)

// TestBackgroundChildHoldingStdout checks that a command that exits at once but leaves a
// background process holding its stdout and stderr is a successful iteration with the output it
// wrote (it failed every iteration with "WaitDelay expired" when os/exec waited for its pipes).
func TestBackgroundChildHoldingStdout(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	s, err := Open(context.Background(), subject.Spec{Config: &Config{
		Command: []any{"sh", "-c", `sleep 30 & echo '{"background_pid": '$!'}'`},
		Metrics: "json",
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		o, err := s.Do(context.Background(), subject.Request{})
		if pid := int(o.Values["background_pid"]); pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck // the test's own sleep
		}
		if err != nil {
			t.Fatalf("iteration %d: %v", i, err)
		}
		if o.Values["background_pid"] <= 0 {
			t.Errorf("iteration %d: the command's stdout was not read: %v", i, o.Values)
		}
	}
}

// TestCancelTracedCommand checks that cancelling an iteration kills the command and returns the
// context's error.
func TestCancelTracedCommand(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep")
	}
	s, err := Open(context.Background(), subject.Spec{Config: &Config{Command: []any{"sleep", "30"}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = s.Do(ctx, subject.Request{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
}
