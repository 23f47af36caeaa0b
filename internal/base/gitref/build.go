package gitref

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// MainPackage returns the module path and the import path of the running binary's main package,
// from its build information: what Build builds at the ref.
func MainPackage() (module, pkg string, err error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Path == "" || bi.Path == "" || bi.Path == "command-line-arguments" {
		return "", "", fmt.Errorf("this binary does not say which package it was built from (build it with `go build` or `go run` of a package in a module, not of a list of .go files)")
	}
	return bi.Main.Path, bi.Path, nil
}

// Build builds the package pkg of module at the ref into file out with `go build`, in the
// worktree: the module is the one whose go.mod declares it (the one at the same place as in the
// working tree when several do). goEnv is the environment of the go command. The error carries
// the end of the compiler's output.
func (w *Worktree) Build(ctx context.Context, module, pkg, out string, goEnv []string) error {
	modDir, err := w.findModule(module)
	if err != nil {
		return err
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	dir := filepath.Join(modDir, filepath.FromSlash(rel))
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("%s at %s (%s): the main package %s is not there: %w", w.Ref, w.Short(), w.Dir, pkg, err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("%s at %s: building %s needs the go command: %w (install Go, or put it on PATH)", w.Ref, w.Short(), pkg, err)
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", out, ".")
	cmd.Dir, cmd.Env = dir, goEnv
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s at %s: go build %s failed: %w\n%s", w.Ref, w.Short(), pkg, err, tailLines(string(msg), 20))
	}
	return nil
}

// findModule finds the directory of the worktree whose go.mod declares module.
func (w *Worktree) findModule(module string) (string, error) {
	var found []string
	err := filepath.WalkDir(w.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "vendor", "node_modules", "testdata":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && p != w.Dir {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == "go.mod" && modulePath(p) == module {
			found = append(found, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(found) == 0 {
		return "", fmt.Errorf("%s at %s: no go.mod declares module %s, which this binary was built from (is the binary built from this repository?)", w.Ref, w.Short(), module)
	}
	return found[0], nil // WalkDir's lexical order: the shallowest first at the top
}

// modulePath reads the module line of a go.mod file.
func modulePath(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
