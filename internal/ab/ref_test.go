package ab

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
