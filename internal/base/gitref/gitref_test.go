package gitref

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo makes a git repository with two commits of file a.txt ("one", then "two") and returns it.
func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed:", err)
	}
	dir := t.TempDir()
	run(t, dir, "init", "-q")
	for _, v := range []string{"one", "two"} {
		if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, dir, "add", "-A")
		run(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", v)
	}
	return dir
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func worktrees(t *testing.T, dir string) int {
	t.Helper()
	return strings.Count(run(t, dir, "worktree", "list"), "\n")
}

// Open checks the ref out beside the working tree, Map finds a file's counterpart there, and
// Remove leaves nothing behind.
func TestOpenMapRemove(t *testing.T) {
	dir := repo(t)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	w, err := Open(context.Background(), sub, "HEAD~1")
	if err != nil {
		t.Fatal(err)
	}
	if w.Commit != strings.TrimSpace(run(t, dir, "rev-parse", "HEAD~1")) || w.Dirty {
		t.Errorf("commit %s dirty %v, want HEAD~1's and clean", w.Commit, w.Dirty)
	}
	p, err := w.Map(filepath.Join(dir, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "one" {
		t.Errorf("a.txt at HEAD~1 reads %q, want one", b)
	}
	if _, err := w.Map(t.TempDir()); err == nil {
		t.Error("a path outside the repository was mapped")
	}
	if err := w.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.Dir); !os.IsNotExist(err) || worktrees(t, dir) != 1 {
		t.Errorf("after Remove: %v, %d worktrees", err, worktrees(t, dir))
	}
}

// A ref that is not a commit is ErrRef, named, with a hint.
func TestOpenBadRef(t *testing.T) {
	dir := repo(t)
	for _, ref := range []string{"no-such-ref", "HEAD~5", "--all", ""} {
		_, err := Open(context.Background(), dir, ref)
		if !errors.Is(err, ErrRef) || !strings.Contains(err.Error(), ref) {
			t.Errorf("ref %q: %v, want ErrRef naming it", ref, err)
		}
	}
	if worktrees(t, dir) != 1 {
		t.Error("a worktree was left")
	}
}

// Clean removes a worktree whose inferbench process is gone (a second Ctrl-C, a kill), and
// keeps one whose process lives.
func TestCleanStale(t *testing.T) {
	dir := repo(t)
	tmp := t.TempDir()
	dead := filepath.Join(tmp, "inferbench-ref-dead", "tree")
	live := filepath.Join(tmp, "inferbench-ref-live", "tree")
	run(t, dir, "worktree", "add", "--detach", "--lock", "--reason", lockReason+"999999999", dead, "HEAD")
	run(t, dir, "worktree", "add", "--detach", "--lock", "--reason", lockReason+"1", live, "HEAD") // pid 1 lives
	Clean(context.Background(), dir)
	if _, err := os.Stat(filepath.Dir(dead)); !os.IsNotExist(err) {
		t.Errorf("the dead process's worktree is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the live process's worktree was removed: %v", err)
	}
	if n := worktrees(t, dir); n != 2 {
		t.Errorf("%d worktrees, want the main one and the live one", n)
	}
}

// The worktree's path has the working tree's length, so that a process's memory layout (its
// PWD) and what is counted of it are the same on both sides: in the temporary directory when the
// working tree's path is the longer, else beside it. Before, it was always TMPDIR/…/tree.
func TestOpenSameLength(t *testing.T) {
	for _, tt := range []struct {
		name   string
		tmpdir func(t *testing.T) string // TMPDIR for the run
		beside bool                      // the worktree lies beside the working tree
	}{
		{"temporary directory", func(t *testing.T) string { return os.TempDir() }, false},
		{"beside", func(t *testing.T) string {
			long := filepath.Join(t.TempDir(), strings.Repeat("x", 120))
			if err := os.Mkdir(long, 0o755); err != nil {
				t.Fatal(err)
			}
			return long
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := repo(t)
			t.Setenv("TMPDIR", tt.tmpdir(t))
			w, err := Open(context.Background(), dir, "HEAD~1")
			if err != nil {
				t.Fatal(err)
			}
			if len(w.Dir) != len(w.Root) {
				t.Errorf("worktree %s (%d characters), working tree %s (%d): want the same length", w.Dir, len(w.Dir), w.Root, len(w.Root))
			}
			if got := filepath.Dir(w.Dir) == filepath.Dir(w.Root); got != tt.beside {
				t.Errorf("worktree %s beside the working tree %s: %v, want %v", w.Dir, w.Root, got, tt.beside)
			}
			if data, err := os.ReadFile(filepath.Join(w.Dir, "a.txt")); err != nil || string(data) != "one" {
				t.Errorf("a.txt at HEAD~1: %q, %v", data, err)
			}
			if err := w.Remove(); err != nil {
				t.Fatal(err)
			}
			if exists(w.Dir) {
				t.Errorf("%s remains after Remove", w.Dir)
			}
		})
	}
}
