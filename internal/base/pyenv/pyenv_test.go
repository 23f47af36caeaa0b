package pyenv

import (
	"os"
	"path/filepath"
	"testing"
)

func touchExec(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	touchExec(t, filepath.Join(venv, "bin", "python3"))
	conda := filepath.Join(dir, "conda")
	touchExec(t, filepath.Join(conda, "bin", "python"))
	pathA, pathB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	touchExec(t, filepath.Join(pathB, "python3"))
	if err := os.MkdirAll(pathA, 0o755); err != nil {
		t.Fatal(err)
	}
	notExec := filepath.Join(dir, "c")
	if err := os.MkdirAll(notExec, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notExec, "python3"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	path := notExec + string(os.PathListSeparator) + pathA + string(os.PathListSeparator) + pathB
	cases := []struct {
		name string
		env  []string
		want Interpreter
	}{
		// INFERBENCH_PYTHON wins over an active virtual environment
		{"explicit", []string{"INFERBENCH_PYTHON=/opt/py", "VIRTUAL_ENV=" + venv, "PATH=" + path}, Interpreter{"/opt/py", "INFERBENCH_PYTHON"}},
		// an active venv's interpreter before PATH
		{"venv", []string{"VIRTUAL_ENV=" + venv, "PATH=" + path}, Interpreter{filepath.Join(venv, "bin", "python3"), "VIRTUAL_ENV"}},
		// a conda environment has bin/python
		{"conda", []string{"CONDA_PREFIX=" + conda, "PATH=" + path}, Interpreter{filepath.Join(conda, "bin", "python"), "CONDA_PREFIX"}},
		// a VIRTUAL_ENV without an interpreter is passed over
		{"stale venv", []string{"VIRTUAL_ENV=" + pathA, "PATH=" + path}, Interpreter{filepath.Join(pathB, "python3"), "PATH"}},
		// python3 on PATH: the first executable one
		{"path", []string{"PATH=" + path}, Interpreter{filepath.Join(pathB, "python3"), "PATH"}},
		// an empty INFERBENCH_PYTHON is unset
		{"empty", []string{"INFERBENCH_PYTHON=", "PATH=" + pathA}, Interpreter{Fallback, "default"}},
		// nothing at all
		{"none", nil, Interpreter{Fallback, "default"}},
		// the last of repeated keys wins, as in exec
		{"repeated", []string{"INFERBENCH_PYTHON=/x", "INFERBENCH_PYTHON=/y"}, Interpreter{"/y", "INFERBENCH_PYTHON"}},
	}
	for _, c := range cases {
		if got := FindIn(c.env); got != c.want {
			t.Errorf("%s: FindIn = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestProjectRoot(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	benches := filepath.Join(proj, "benches", "llm")
	if err := os.MkdirAll(benches, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := ProjectRoot(benches, ""); got != "" {
		t.Errorf("no marker, no cwd: %q, want none", got)
	}
	if got := ProjectRoot(benches, proj); got != proj {
		t.Errorf("no marker: %q, want the working directory %s", got, proj)
	}
	if got := ProjectRoot(benches, filepath.Join(dir, "elsewhere")); got != "" {
		t.Errorf("no marker, unrelated cwd: %q, want none", got)
	}
	if err := os.WriteFile(filepath.Join(proj, "requirements.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ProjectRoot(benches, "/"); got != proj {
		t.Errorf("requirements.txt: %q, want %s", got, proj)
	}
	if err := os.WriteFile(filepath.Join(benches, "pyproject.toml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ProjectRoot(benches, ""); got != benches {
		t.Errorf("nearest marker: %q, want %s", got, benches)
	}
}

func TestLookup(t *testing.T) {
	for _, c := range []struct {
		name string
		env  []string
		key  string
		want string
		ok   bool
	}{
		// The last entry of a key wins, as for a started process.
		{"last wins", []string{"A=1", "B=2", "A=3"}, "A", "3", true},
		// A set but empty variable is found.
		{"empty value", []string{"A="}, "A", "", true},
		// An entry without "=" names nothing.
		{"no equals", []string{"A"}, "A", "", false},
		// A key is matched whole, not as a prefix.
		{"prefix", []string{"AB=1"}, "A", "", false},
		// The value keeps any further "=".
		{"equals in value", []string{"A=b=c"}, "A", "b=c", true},
	} {
		if got, ok := Lookup(c.env, c.key); got != c.want || ok != c.ok {
			t.Errorf("%s: Lookup = %q, %v, want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
