// Package pyenv finds the Python interpreter that inferbench's workers run under and that
// `python-module:` requirements are asked of, and the project root a benchmark's Python code
// imports from.
//
// The interpreter is, in order: $INFERBENCH_PYTHON; the interpreter of the active virtual
// environment ($VIRTUAL_ENV, then $CONDA_PREFIX); `python3` on $PATH; /usr/bin/python3. A
// definition's own `python:` key wins over all of them (subject/worker).
package pyenv

import (
	"os"
	"path/filepath"
	"strings"
)

// Fallback is the interpreter used when nothing else names one: Debian's, which sees Debian's
// python3-* packages.
const Fallback = "/usr/bin/python3"

// Interpreter is a chosen Python interpreter and why it was chosen.
type Interpreter struct {
	Path   string // the executable, as it will be run
	Source string // INFERBENCH_PYTHON, VIRTUAL_ENV, CONDA_PREFIX, PATH or default
}

// Find chooses the interpreter from the environment read by lookup (os.LookupEnv when nil).
func Find(lookup func(string) (string, bool)) Interpreter {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if py, ok := lookup("INFERBENCH_PYTHON"); ok && py != "" {
		return Interpreter{Path: py, Source: "INFERBENCH_PYTHON"}
	}
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		dir, ok := lookup(v)
		if !ok || dir == "" {
			continue
		}
		for _, name := range []string{"python3", "python"} {
			if p := filepath.Join(dir, "bin", name); isExec(p) {
				return Interpreter{Path: p, Source: v}
			}
		}
	}
	if path, ok := lookup("PATH"); ok {
		for _, dir := range filepath.SplitList(path) {
			if dir == "" {
				continue // an empty entry means "." to a shell; a worker's directory varies
			}
			if p := filepath.Join(dir, "python3"); isExec(p) {
				return Interpreter{Path: p, Source: "PATH"}
			}
		}
	}
	return Interpreter{Path: Fallback, Source: "default"}
}

// FindIn is Find over an environment list of KEY=VALUE entries (the last entry of a key wins).
func FindIn(env []string) Interpreter {
	return Find(func(key string) (string, bool) { return Lookup(env, key) })
}

// Lookup returns the value of key in env, a list of KEY=VALUE entries as os.Environ returns it.
// The last entry of a key wins, as it does for a process started with that list (os/exec).
func Lookup(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// rootMarkers are the files and folders that mark a Python project's root.
var rootMarkers = []string{"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", ".git"}

// ProjectRoot returns the root of the Python project that holds dir: the nearest ancestor of dir
// (dir included) holding pyproject.toml, setup.py, setup.cfg, requirements.txt or .git. Without one
// it returns cwd when cwd is an ancestor of dir, else "". A benchmark's code imports its project's
// modules from there, as `python run_benchmarks.py` run at the root would (with
// `from framework import ...` or `from src.pkg import ...`).
func ProjectRoot(dir, cwd string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for d := abs; ; {
		for _, m := range rootMarkers {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				return d
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if cwd == "" {
		return ""
	}
	if c, err := filepath.Abs(cwd); err == nil {
		if rel, err := filepath.Rel(c, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return c
		}
	}
	return ""
}
