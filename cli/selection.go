package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/subject/gofunc"
	"github.com/inferbench/inferbench/suite"
)

// selection holds the flags that choose scenarios; run, list and validate share them.
type selection struct {
	filter     suite.Filter
	set        []string
	enableMock bool
}

func (s *selection) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&s.filter.Include, "include", nil, "run only benchmarks or scenarios matching this glob (repeatable; * matches across /)")
	f.StringArrayVar(&s.filter.Exclude, "exclude", nil, "skip benchmarks or scenarios matching this glob (repeatable)")
	f.StringSliceVar(&s.filter.Category, "category", nil, "only these categories: unit, integration, performance")
	f.StringSliceVar(&s.filter.Model, "model", nil, "only benchmarks whose model matches this glob; in quick runs (--exec, --openai, --framework) the model to use")
	f.StringSliceVar(&s.filter.Tag, "tag", nil, "only benchmarks with one of these tags")
	f.StringArrayVar(&s.set, "set", nil, "override a parameter in every scenario: --set batch_size=4 (repeatable)")
	f.BoolVar(&s.enableMock, "enable-mock", false, "run definitions whose subject is the simulated mock model")
}

// setStrings returns the --set overrides as written, for the record of the run.
func (s *selection) setStrings() map[string]string {
	if len(s.set) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, kv := range s.set {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func (s *selection) overrides() (map[string]any, error) {
	out := map[string]any{}
	for _, kv := range s.set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageErr("--set %q: want key=value", kv)
		}
		out[k] = suite.ParseValue(v)
	}
	return out, nil
}

func (s *selection) checker(o *IO) *suite.Checker {
	py, ok := o.LookupEnv("INFERBENCH_PYTHON")
	if !ok {
		py = suite.DefaultPython
	}
	return &suite.Checker{Python: py, LookupEnv: o.LookupEnv, EnableMock: s.enableMock}
}

// roots returns the directories or files to search: the arguments, or the working directory.
func roots(o *IO, args []string) []string {
	if len(args) == 0 {
		return []string{workDir(o)}
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = inDir(o, a)
	}
	return out
}

// loadBenchmarks discovers and parses definitions. Broken definitions are a usage error (exit 2)
// listing every problem.
func loadBenchmarks(o *IO, args []string) ([]*suite.Benchmark, error) {
	benches, err := suite.Load(o.LookupEnv, roots(o, args)...)
	var es suite.Errors
	if errors.As(err, &es) {
		return nil, &CodeError{Code: ExitUsage, Err: fmt.Errorf("%d problem(s) in benchmark definitions:\n%w", len(es), es)}
	}
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if o.Funcs {
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

// scenarios expands and filters.
func (s *selection) scenarios(benches []*suite.Benchmark) ([]*suite.Scenario, error) {
	set, err := s.overrides()
	if err != nil {
		return nil, err
	}
	var out []*suite.Scenario
	for _, b := range benches {
		for _, sc := range b.Expand(set) {
			if s.filter.Match(sc) {
				out = append(out, sc)
			}
		}
	}
	return out, nil
}

func (s *selection) describe() map[string]string {
	m := map[string]string{}
	add := func(k string, v []string) {
		if len(v) > 0 {
			m[k] = strings.Join(v, ",")
		}
	}
	add("include", s.filter.Include)
	add("exclude", s.filter.Exclude)
	add("category", s.filter.Category)
	add("model", s.filter.Model)
	add("tag", s.filter.Tag)
	if s.enableMock {
		m["enable_mock"] = "true"
	}
	return m
}
