package run

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/base/nearest"
	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/internal/kind/gofunc"
	"github.com/inferbench/inferbench/internal/redact"
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
	// GenerateTokens, when positive, sets max_new_tokens in every scenario: the tokens that
	// generating subjects (mock, torch_llm, OpenAI servers) generate per call. Unlike a --set
	// key, a benchmark need not declare it.
	GenerateTokens int
	// ModelID, when set, sets model_id in every scenario: the model to benchmark (--model-id).
	// torch_llm loads these weights (a local directory or a Hugging Face id in the local cache),
	// Python benchmarks read it as config.model_id, an OpenAI server is asked for this model. Like
	// GenerateTokens, a benchmark need not declare it.
	ModelID string
}

// Env is the part of the process a run reads: the working directory and the environment.
type Env struct {
	Dir  string   // "" for the process's
	Vars []string // KEY=VALUE, as os.Environ
}

// Lookup reads a variable of the environment (the last entry of a key wins).
func (e Env) Lookup(key string) (string, bool) { return pyenv.Lookup(e.Vars, key) }

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

// Python is the interpreter workers and requirement checks use: $INFERBENCH_PYTHON,
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
	scenarios, err := expandSelection(sel, benches)
	if err != nil {
		return nil, err
	}
	if len(scenarios) == 0 {
		where := ""
		if len(benches) == 0 && sel.Benchmarks == nil {
			where = ": " + suite.SearchDescription(roots(sel, env))
		}
		return nil, exit.Usagef("no scenario selected (%d benchmarks found; see 'inferbench list')%s", len(benches), where)
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
	benches, err := suite.Load(env.Lookup, roots(sel, env)...)
	var es suite.Errors
	if errors.As(err, &es) {
		return nil, exit.UsageError(fmt.Errorf("%d problem(s) in benchmark definitions:\n%w", len(es), es))
	}
	if err != nil {
		return nil, exit.UsageError(err)
	}
	if sel.Funcs {
		benches = append(benches, funcBenchmarks(benches)...)
	}
	return benches, nil
}

// roots are the folders or files searched: sel.Paths, or the working directory.
func roots(sel Selection, env Env) []string {
	if len(sel.Paths) == 0 {
		return []string{env.WorkDir()}
	}
	out := make([]string, len(sel.Paths))
	for i, a := range sel.Paths {
		out[i] = env.Path(a)
	}
	return out
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

// expandSelection expands the benchmarks' matrices with sel.Set applied and keeps the scenarios
// sel.Filter matches.
func expandSelection(sel Selection, benches []*suite.Benchmark) ([]*suite.Scenario, error) {
	set, err := sel.overrides()
	if err != nil {
		return nil, err
	}
	var all []*suite.Scenario
	for _, b := range benches {
		all = append(all, b.Expand(set)...)
	}
	out := sel.Filter.Select(all)
	declared := map[string]bool{}
	keyed := map[*suite.Benchmark]bool{} // once a benchmark: ParamKeys reads every include entry
	for _, sc := range out {
		if keyed[sc.Benchmark] {
			continue
		}
		keyed[sc.Benchmark] = true
		for _, k := range sc.Benchmark.ParamKeys() {
			declared[k] = true
		}
	}
	// A pattern naming nothing is a typo or a stale name (an --exclude mock_benchmark that matched
	// nothing was once a silent no-op): say so instead of running something else.
	if len(all) > 0 {
		if bad := sel.Filter.Unmatched(all); len(bad) > 0 {
			return nil, exit.Usagef("%s: no benchmark or scenario has this name (see 'inferbench list'; a bare name matches a benchmark's name, a part of it between '.' or '/', or else a file name)", strings.Join(bad, ", "))
		}
	}
	if len(out) > 0 {
		if err := checkSet(sel.Set, declared); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkSet makes a --set key that no selected benchmark declares a usage error: a typo or a
// renamed parameter would otherwise run scenarios that match no baseline, and pass.
func checkSet(set []string, declared map[string]bool) error {
	known := slices.Sorted(maps.Keys(declared))
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		if declared[k] {
			continue
		}
		msg := fmt.Sprintf("--set %q: no selected benchmark has a parameter %q", kv, k)
		if c := nearest.Name(k, known); c != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", c)
		} else if len(known) > 0 {
			msg += fmt.Sprintf(" (parameters: %s)", strings.Join(known, ", "))
		}
		return exit.Usagef("%s", msg)
	}
	return nil
}

// checker returns the requirement checker of a run: scenarios whose needs are missing are skipped
// with the reason.
func checker(sel Selection, env Env) *suite.Checker {
	return &suite.Checker{Python: env.Python(), LookupEnv: env.Lookup, EnableMock: sel.EnableMock}
}

func (s Selection) overrides() (map[string]any, error) {
	out := map[string]any{}
	for _, kv := range s.Set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, exit.Usagef("--set %q: want key=value", kv)
		}
		out[k] = suite.ParseValue(v)
	}
	maps.Copy(out, s.flagParams())
	return out, nil
}

// flagParams are the parameters set by their own flags (--num-tokens-to-generate, --model-id)
// rather than --set: every scenario gets them whether or not its benchmark declares them.
func (s Selection) flagParams() map[string]any {
	out := map[string]any{}
	if s.GenerateTokens > 0 {
		out[generateTokensParam] = s.GenerateTokens
	}
	if s.ModelID != "" {
		out[modelIDParam] = s.ModelID
	}
	return out
}

// generateTokensParam is the parameter Selection.GenerateTokens sets.
const generateTokensParam = "max_new_tokens"

// modelIDParam is the parameter Selection.ModelID sets.
const modelIDParam = "model_id"

// setStrings returns the overrides as written, for the record of the run.
func (s Selection) setStrings() map[string]string {
	flags := s.flagParams()
	if len(s.Set) == 0 && len(flags) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, kv := range s.Set {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	for k, v := range flags {
		m[k] = fmt.Sprint(v)
	}
	for k := range m {
		if redact.SecretName(k) { // --set hf_token=...
			m[k] = redact.Mask
		}
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

// ListRow is one scenario of a listing (`inferbench list`), with why it would be skipped here.
type ListRow struct {
	Benchmark string         `json:"benchmark"`
	Scenario  string         `json:"scenario"`
	Category  string         `json:"category,omitempty"`
	Model     string         `json:"model,omitempty"`
	Subject   string         `json:"subject"`
	Source    string         `json:"source"`
	Params    map[string]any `json:"params,omitempty"`
	Skip      string         `json:"skip,omitempty"`
}

// List returns the scenarios sel chooses, each with the reason it would be skipped (checked now,
// on this machine), and the number of benchmarks found.
func List(sel Selection, env Env) (rows []ListRow, benchmarks int, err error) {
	benches, err := Discover(sel, env)
	if err != nil {
		return nil, 0, err
	}
	if len(benches) == 0 && sel.Benchmarks == nil {
		return nil, 0, exit.Usagef("no benchmark found: %s", suite.SearchDescription(roots(sel, env)))
	}
	scs, err := expandSelection(sel, benches)
	if err != nil {
		return nil, 0, err
	}
	check := checker(sel, env)
	rows = make([]ListRow, 0, len(scs))
	for _, sc := range scs {
		b := sc.Benchmark
		rows = append(rows, ListRow{b.Name, sc.Name, b.Category, sc.Model(), b.Kind, b.Source(), sc.Params, check.Check(sc)})
	}
	return rows, len(benches), nil
}
