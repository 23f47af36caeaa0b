package run

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/inferbench/inferbench/pyenv"
	"github.com/inferbench/inferbench/subject/gofunc"
	"github.com/inferbench/inferbench/suite"
)

// Selection chooses the scenarios of a run (the select stage); list and validate share it.
type Selection struct {
	// Paths are the files or folders searched for definitions (relative to the working
	// directory); none searches the working directory.
	Paths []string
	// Benchmarks, when set, are run instead of discovered definitions (quick modes, a Go
	// program's own benchmarks).
	Benchmarks []*suite.Benchmark
	// Funcs makes every registered Go function that no definition names a benchmark.
	Funcs      bool
	Filter     suite.Filter
	Set        []string // parameter overrides in every scenario, key=value (--set)
	EnableMock bool     // run definitions whose subject is the simulated mock model
}

// Env is the part of the process a run reads: the working directory and the environment.
type Env struct {
	Dir  string   // "" for the process's
	Vars []string // KEY=VALUE, as os.Environ
}

// Lookup reads a variable of the environment.
func (e Env) Lookup(key string) (string, bool) {
	for i := len(e.Vars) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e.Vars[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Path resolves a relative path against the working directory.
func (e Env) Path(p string) string {
	if e.Dir != "" && !filepath.IsAbs(p) {
		return filepath.Join(e.Dir, p)
	}
	return p
}

// WorkDir is the working directory: Dir, or "." for the process's.
func (e Env) WorkDir() string {
	if e.Dir == "" {
		return "."
	}
	return e.Dir
}

// Python is the interpreter workers and requirement checks use (pyenv.Find): $INFERBENCH_PYTHON,
// else the active virtual environment's, else python3 on PATH, else /usr/bin/python3.
func (e Env) Python() string {
	return pyenv.Find(e.Lookup).Path
}

// Select returns the scenarios sel chooses: discovered (or given) benchmarks, expanded and
// filtered. Broken definitions and an empty selection are usage errors.
func Select(sel Selection, env Env) ([]*suite.Scenario, error) {
	benches, err := Discover(sel, env)
	if err != nil {
		return nil, err
	}
	scenarios, err := Expand(sel, benches)
	if err != nil {
		return nil, err
	}
	if len(scenarios) == 0 {
		return nil, usageErr("no scenario selected (%d benchmarks found; see 'inferbench list')", len(benches))
	}
	return scenarios, nil
}

// Discover returns sel.Benchmarks when set, else the definitions under sel.Paths and, with
// sel.Funcs, the registered Go functions. Broken definitions are a usage error listing every
// problem.
func Discover(sel Selection, env Env) ([]*suite.Benchmark, error) {
	if sel.Benchmarks != nil {
		return sel.Benchmarks, nil
	}
	roots := []string{env.WorkDir()}
	if len(sel.Paths) > 0 {
		roots = make([]string, len(sel.Paths))
		for i, a := range sel.Paths {
			roots[i] = env.Path(a)
		}
	}
	benches, err := suite.Load(env.Lookup, roots...)
	var es suite.Errors
	if errors.As(err, &es) {
		return nil, UsageError(fmt.Errorf("%d problem(s) in benchmark definitions:\n%w", len(es), es))
	}
	if err != nil {
		return nil, UsageError(err)
	}
	if sel.Funcs {
		benches = append(benches, funcBenchmarks(benches)...)
	}
	return benches, nil
}

// funcBenchmarks makes a benchmark of every registered Go function no definition names.
func funcBenchmarks(defined []*suite.Benchmark) []*suite.Benchmark {
	taken := map[string]bool{}
	for _, b := range defined {
		taken[b.Name] = true
		if c, ok := b.Config.(*gofunc.Config); ok {
			taken[c.Func] = true
		}
	}
	var out []*suite.Benchmark
	for _, name := range gofunc.Names() {
		if taken[name] || strings.HasPrefix(name, "inferbench/") {
			continue // built-ins run only when a definition names them
		}
		out = append(out, &suite.Benchmark{
			Name: name, Kind: "gofunc", Config: &gofunc.Config{Func: name},
			File: "(registered)", Dir: ".", Category: "unit",
		})
	}
	return out
}

// Expand expands the benchmarks' matrices with sel.Set applied and keeps the scenarios
// sel.Filter matches.
func Expand(sel Selection, benches []*suite.Benchmark) ([]*suite.Scenario, error) {
	set, err := sel.overrides()
	if err != nil {
		return nil, err
	}
	var out []*suite.Scenario
	for _, b := range benches {
		for _, sc := range b.Expand(set) {
			if sel.Filter.Match(sc) {
				out = append(out, sc)
			}
		}
	}
	return out, nil
}

// Checker returns the requirement checker of a run: scenarios whose needs are missing are skipped
// with the reason.
func Checker(sel Selection, env Env) *suite.Checker {
	return &suite.Checker{Python: env.Python(), LookupEnv: env.Lookup, EnableMock: sel.EnableMock}
}

func (s Selection) overrides() (map[string]any, error) {
	out := map[string]any{}
	for _, kv := range s.Set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageErr("--set %q: want key=value", kv)
		}
		out[k] = suite.ParseValue(v)
	}
	return out, nil
}

// setStrings returns the overrides as written, for the record of the run.
func (s Selection) setStrings() map[string]string {
	if len(s.Set) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, kv := range s.Set {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// describe returns the filters, for the record of the run.
func (s Selection) describe() map[string]string {
	m := map[string]string{}
	add := func(k string, v []string) {
		if len(v) > 0 {
			m[k] = strings.Join(v, ",")
		}
	}
	add("include", s.Filter.Include)
	add("exclude", s.Filter.Exclude)
	add("category", s.Filter.Category)
	add("model", s.Filter.Model)
	add("tag", s.Filter.Tag)
	if s.EnableMock {
		m["enable_mock"] = "true"
	}
	return m
}
