// Package gitref checks a git ref out beside the working tree, in a temporary detached worktree
// (`git worktree add --detach`), so that a run can measure the code at that ref interleaved with
// the working tree's (`inferbench run --baseline-ref REF`), and builds the Go program there.
package gitref

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Worktree is a ref checked out in a temporary directory. Remove deletes it.
type Worktree struct {
	Ref    string // as asked for ("origin/main", "HEAD~1")
	Commit string // the commit it resolved to (full hash)
	// Root is the top of the working tree the ref belongs to; Dir the worktree's top, Root's
	// counterpart at Ref.
	Root, Dir string
	// Head is the working tree's HEAD commit; Dirty reports uncommitted changes to tracked
	// files there (they are measured: the working tree is the side under test, as it is).
	Head  string
	Dirty bool
	tmp   string
}

// ErrRef marks a ref that is not a commit of the repository (errors.Is).
var ErrRef = errors.New("not a commit")

// Open resolves ref in the git repository holding dir and checks that commit out, detached, in a
// new temporary directory. The error names ref and ends with a hint.
func Open(ctx context.Context, dir, ref string) (*Worktree, error) {
	if ref == "" || strings.HasPrefix(ref, "-") {
		return nil, fmt.Errorf("--baseline-ref %q: %w (want a branch, tag or commit, e.g. origin/main)", ref, ErrRef)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	root, err := git(ctx, abs, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("--baseline-ref %s: %s is not in a git repository: %w (run inferbench in the repository whose history holds %s)", ref, abs, err, ref)
	}
	commit, err := git(ctx, root, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("--baseline-ref %s: %w in %s (a shallow clone lacks older commits: fetch it, e.g. `git fetch origin main`, or check out with fetch-depth: 0)", ref, ErrRef, root)
	}
	w := &Worktree{Ref: ref, Commit: commit, Root: root}
	w.Head, _ = git(ctx, root, "rev-parse", "--verify", "--quiet", "HEAD")
	status, _ := git(ctx, root, "status", "--porcelain", "--untracked-files=no")
	w.Dirty = status != ""
	if w.tmp, w.Dir, err = place(root); err != nil {
		return nil, fmt.Errorf("--baseline-ref %s: %w", ref, err)
	}
	Clean(ctx, root)
	// Locked with this process's id: a run that could not remove its worktree (killed, or a
	// second Ctrl-C) leaves it to the next run's Clean, and no other run removes a live one.
	reason := fmt.Sprintf("%s%d", lockReason, os.Getpid())
	if _, err := git(ctx, root, "worktree", "add", "--detach", "--quiet", "--lock", "--reason", reason, w.Dir, commit); err != nil {
		os.RemoveAll(w.tmp)
		return nil, fmt.Errorf("--baseline-ref %s: check out %.12s: %w", ref, commit, err)
	}
	return w, nil
}

// tempPrefix starts the name of the temporary directory a worktree goes in (place); Clean
// also knows the prefix of earlier versions.
const (
	tempPrefix    = "ibref-"
	oldTempPrefix = "inferbench-ref-"
)

// place makes the directory the worktree of the repository at root goes in, and returns it (tmp,
// removed with the worktree) and the worktree's top (dir), whose path has root's length wherever
// it can: in a temporary directory when root's path is longer than that directory's, else beside
// root under a hidden name of root's name's length, else (nothing writable there) in the
// temporary directory anyway.
//
// The length matters to instruction counts. A process's memory layout depends on its working
// directory's path (PWD is in its environment, on its stack, and a shell keeps it on its heap),
// and so does the work of functions whose path depends on where their data lies: a shell loop
// counted 0.56% fewer instructions in a worktree whose path was 10 characters longer than the
// working tree's, all of it in glibc's AVX2 strcmp (`make calibrate-ref MEASURE=instructions`:
// the unchanged commit failed 2 of 2 at the 0.5% threshold). Two sides of equal path lengths
// count the same code the same.
func place(root string) (tmp, dir string, err error) {
	if tmp, err = os.MkdirTemp("", tempPrefix); err != nil {
		return "", "", err
	}
	if n := len(root) - len(tmp) - 1; n >= 1 {
		return tmp, filepath.Join(tmp, padName("tree", n)), nil
	}
	parent, name := filepath.Split(root)
	if parent != "" && name != "" {
		for try := 0; try < 8; try++ {
			sib := filepath.Join(parent, hiddenName(len(name)))
			if os.Mkdir(sib, 0o700) == nil {
				os.RemoveAll(tmp)
				return sib, sib, nil // git worktree add takes an empty directory
			}
		}
	}
	return tmp, filepath.Join(tmp, "tree"), nil
}

// padName is name cut or padded with '-' to n characters.
func padName(name string, n int) string {
	if len(name) >= n {
		return name[:n]
	}
	return name + strings.Repeat("-", n-len(name))
}

// hiddenName is a random name of n characters, starting with '.' when n > 1.
func hiddenName(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	if n > 1 {
		b[0] = '.'
	}
	return string(b)
}

// Remove deletes the worktree and its directory. It runs with a context of its own: it is called
// on the way out of an interrupted run too.
func (w *Worktree) Remove() error {
	if w == nil || w.tmp == "" {
		return nil
	}
	_, err := git(context.Background(), w.Root, "worktree", "remove", "--force", "--force", w.Dir) // twice: it is locked
	if rerr := os.RemoveAll(w.tmp); err == nil {
		err = rerr
	}
	_, _ = git(context.Background(), w.Root, "worktree", "prune")
	w.tmp = ""
	if err != nil {
		return fmt.Errorf("remove the worktree of %s at %s: %w", w.Ref, w.Dir, err)
	}
	return nil
}

// lockReason starts the lock reason of the worktrees Open makes; the process id follows.
const lockReason = "inferbench run --baseline-ref, pid "

// Clean removes the worktrees of the repository at root that an inferbench process made and
// left behind when it ended without removing them (its process is gone). Problems are ignored:
// a worktree left is only disk space.
func Clean(ctx context.Context, root string) {
	out, err := git(ctx, root, "worktree", "list", "--porcelain")
	if err != nil {
		return
	}
	for _, entry := range strings.Split(out, "\n\n") {
		var path, reason string
		for _, line := range strings.Split(entry, "\n") {
			if p, ok := strings.CutPrefix(line, "worktree "); ok {
				path = p
			} else if r, ok := strings.CutPrefix(line, "locked "); ok {
				reason = r
			}
		}
		pid, err := strconv.Atoi(strings.TrimPrefix(reason, lockReason))
		if path == "" || !strings.HasPrefix(reason, lockReason) || err != nil || alive(pid) {
			continue
		}
		if _, err := git(ctx, root, "worktree", "remove", "--force", "--force", path); err == nil || !exists(path) {
			if parent := filepath.Base(filepath.Dir(path)); strings.HasPrefix(parent, tempPrefix) || strings.HasPrefix(parent, oldTempPrefix) {
				os.RemoveAll(filepath.Dir(path))
			}
		}
	}
	_, _ = git(ctx, root, "worktree", "prune")
}

// alive reports whether process pid exists (signal 0 is delivered or refused for permission).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Short is the commit's abbreviated hash, for people.
func (w *Worktree) Short() string {
	if len(w.Commit) > 12 {
		return w.Commit[:12]
	}
	return w.Commit
}

// Map returns the path at Ref of path p of the working tree: the same path relative to the
// repository's top. A path outside the repository is an error.
func (w *Worktree) Map(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	root := w.Root
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the repository %s: it has no counterpart at %s", p, w.Root, w.Ref)
	}
	return filepath.Join(w.Dir, rel), nil
}

// git runs git in dir and returns its trimmed stdout; the error carries its stderr.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(errb.String()); msg != "" {
			return "", fmt.Errorf("git %s: %s", args[0], lastLine(msg))
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return strings.TrimSpace(out.String()), nil
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
