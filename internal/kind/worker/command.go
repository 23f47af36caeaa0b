package worker

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/internal/workers"
	"github.com/inferbench/inferbench/subject"
)

// program resolves a worker command's program: a path with a slash, or a bare name of a file in
// the definition's folder, is that file (never a program of the same name found on $PATH); any
// other bare name (python3, node) is a program looked up on $PATH.
func program(name, dir string, rel func(string) string) string {
	if strings.Contains(name, "/") {
		return rel(name)
	}
	if dir == "" {
		return name // no definition (a test, the library): a program name
	}
	if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && !fi.IsDir() {
		return rel(name)
	}
	return name
}

// command returns the argv and environment of the worker process.
func command(c Config, s subject.Spec) (argv, env []string, err error) {
	env = s.Env
	if env == nil {
		env = os.Environ()
	}
	env = append([]string(nil), env...)
	// Paths are made absolute: the process runs in s.Dir, where a path relative to the current
	// folder would be looked up again.
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		if abs, err := filepath.Abs(filepath.Join(s.Dir, p)); err == nil {
			return abs
		}
		return filepath.Join(s.Dir, p)
	}
	if len(c.Command) > 0 {
		argv = append([]string(nil), c.Command...)
		argv[0] = program(argv[0], s.Dir, rel)
	} else {
		py := c.Python
		if py == "" {
			py = pyenv.FindIn(env).Path // the interpreter requirements are checked with
		}
		switch {
		case c.Script != "":
			argv = []string{py, rel(c.Script)}
		case c.Module != "":
			argv = []string{py, "-m", c.Module}
		default:
			argv = []string{py, "-m", workers.Package}
		}
		path := rel(c.Path)
		if path == "" {
			if path, err = workers.PythonPath(""); err != nil {
				return nil, nil, err
			}
		}
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		cwd, _ := os.Getwd()
		if root := pyenv.ProjectRoot(s.Dir, cwd); root != "" && s.Dir != "" {
			path += string(os.PathListSeparator) + root
		}
		if old := pythonpath(env); old != "" {
			path += string(os.PathListSeparator) + old
		}
		env = setenv(env, "PYTHONPATH", path)
		env = setenv(env, "PYTHONUNBUFFERED", "1")
		env = setenv(env, "PYTHONFAULTHANDLER", "1")
		env = setenv(env, "PYTHONDONTWRITEBYTECODE", "1")
	}
	keys := slices.Sorted(maps.Keys(c.Env))
	for _, k := range keys {
		env = setenv(env, k, c.Env[k])
	}
	return argv, env, nil
}

// pythonpath is PYTHONPATH in env, or "".
func pythonpath(env []string) string {
	v, _ := pyenv.Lookup(env, "PYTHONPATH")
	return v
}

func setenv(env []string, key, val string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+val)
}
