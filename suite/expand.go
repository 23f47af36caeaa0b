package suite

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/inferbench/inferbench/internal/base/inert"
	"github.com/inferbench/inferbench/subject"
)

// Expand returns the benchmark's scenarios: the cartesian product of its axes (the last axis
// varies fastest), minus points matching an exclude entry, plus include points not already there.
// set overrides parameters in every scenario, matrix points included: a point's value of a key
// set overrides is replaced by set's, so the scenario is named after what runs, and points that
// become one ("--set variant=eager" on a variant axis) are one scenario.
func (b *Benchmark) Expand(set map[string]any) []*Scenario {
	kept := b.points(nil)
	out := make([]*Scenario, 0, len(kept))
	seen := map[string]bool{}
	for _, p := range kept {
		p = overridePoint(p, set)
		name := pointName(p)
		if seen[name] {
			continue
		}
		seen[name] = true
		params := subject.Params(maps.Clone(b.Params))
		if params == nil {
			params = subject.Params{}
		}
		for _, kv := range p {
			params[kv.Key] = kv.Value
		}
		maps.Copy(params, set)
		out = append(out, &Scenario{Benchmark: b, Name: name, Point: p, Params: params, Skip: b.Skip})
	}
	return out
}

// overridePoint returns p with the values of the keys set overrides replaced by set's.
func overridePoint(p []KV, set map[string]any) []KV {
	if len(set) == 0 {
		return p
	}
	out := make([]KV, len(p))
	for i, kv := range p {
		if v, ok := set[kv.Key]; ok {
			kv.Value = v
		}
		out[i] = kv
	}
	return out
}

// points returns the benchmark's matrix points: the cartesian product of its axes minus the
// excluded points, then each include entry that is not one of them already. Two points of one
// name with other values (of the axes, or an include entry) are passed to clash when it is not
// nil, with the index of q's include entry (-1: q is a point of the axes): Parse refuses them.
// Both are kept, so that a benchmark Parse did not check shows its clash as a duplicate name.
func (b *Benchmark) points(clash func(p, q []KV, include int)) [][]KV {
	var points [][]KV
	var rec func(i int, cur []KV)
	rec = func(i int, cur []KV) {
		if i == len(b.Axes) {
			points = append(points, append([]KV(nil), cur...))
			return
		}
		for _, v := range b.Axes[i].Values {
			rec(i+1, append(cur, KV{b.Axes[i].Name, v}))
		}
	}
	if len(b.Axes) > 0 {
		rec(0, nil)
	}
	var kept [][]KV
	names := map[string][]KV{}
	for _, p := range points {
		if b.excluded(p) {
			continue
		}
		name := pointName(p)
		if q, dup := names[name]; dup {
			// Values holding '/' or '=' (x: "a/y=b" with y: c, and x: a with y: "b/y=c").
			if clash != nil {
				clash(q, p, -1)
			}
		}
		names[name] = p
		kept = append(kept, p)
	}
	for i, inc := range b.Include {
		p := b.includePoint(inc)
		name := pointName(p)
		if q, dup := names[name]; dup {
			if samePoint(p, q) {
				continue // a point already there
			}
			if clash != nil {
				clash(q, p, i)
			}
		}
		names[name] = p
		kept = append(kept, p)
	}
	if len(kept) == 0 && len(b.Axes) == 0 {
		kept = [][]KV{nil}
	}
	return kept
}

// samePoint reports whether two points set the same keys to values that print alike.
func samePoint(p, q []KV) bool {
	return slices.EqualFunc(p, q, func(a, b KV) bool { return a.Key == b.Key && formatValue(a.Value) == formatValue(b.Value) })
}

func (b *Benchmark) excluded(p []KV) bool {
	for _, ex := range b.Exclude {
		match := len(ex) > 0
		for k, v := range ex {
			if !hasKV(p, k, v) {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// includePoint orders an include entry: axis keys first in axis order, then its other keys sorted.
func (b *Benchmark) includePoint(inc map[string]any) []KV {
	var p []KV
	seen := map[string]bool{}
	for _, a := range b.Axes {
		if v, ok := inc[a.Name]; ok {
			p = append(p, KV{a.Name, v})
			seen[a.Name] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(inc)) {
		if !seen[k] {
			p = append(p, KV{k, inc[k]})
		}
	}
	return p
}

func hasKV(p []KV, k string, v any) bool {
	for _, kv := range p {
		if kv.Key == k {
			return formatValue(kv.Value) == formatValue(v)
		}
	}
	return false
}

func pointName(p []KV) string {
	if len(p) == 0 {
		return "default"
	}
	parts := make([]string, len(p))
	for i, kv := range p {
		parts[i] = kv.Key + "=" + formatValue(kv.Value)
	}
	return strings.Join(parts, "/")
}

// formatValue prints a parameter's value in a scenario's name: as fmt.Sprint does, but null as
// "null", its YAML and JSON spelling, where fmt prints "<nil>".
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = formatValue(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		for i, k := range keys {
			keys[i] = k + ":" + formatValue(x[k])
		}
		return "map[" + strings.Join(keys, " ") + "]"
	}
	return inert.Text(fmt.Sprint(v)) // a control character is shown escaped: \x1b, not ESC
}

// pointText shows a point's values as a definition writes them, for errors: {x: "a/y=b", y: c}.
func pointText(p []KV) string {
	parts := make([]string, len(p))
	for i, kv := range p {
		v := formatValue(kv.Value)
		if _, ok := kv.Value.(string); ok {
			v = strconv.Quote(v)
		}
		parts[i] = kv.Key + ": " + v
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// Filter selects scenarios. Empty fields select everything.
type Filter struct {
	Include  []string // globs on "benchmark" or "benchmark/scenario", or bare names (see MatchName and Select); any match selects
	Exclude  []string // the same; any match drops
	Category []string // categories; any match selects
	Model    []string // globs on the model name
	Tag      []string // tags; any match selects
}

// Select returns the scenarios of all that the filter selects, in order. A bare name in Include
// or Exclude is resolved against all (see MatchName): it names the benchmarks it names, and a
// file only when it names no benchmark.
func (f Filter) Select(all []*Scenario) []*Scenario {
	inc, exc := resolve(f.Include, all), resolve(f.Exclude, all)
	var out []*Scenario
	for _, s := range all {
		if f.match(s, inc, exc) {
			out = append(out, s)
		}
	}
	return out
}

// namePattern is an --include or --exclude pattern resolved against the scenarios of a run.
type namePattern struct {
	pattern string
	file    bool // a bare name that names no benchmark: it names a file
}

func resolve(pats []string, all []*Scenario) []namePattern {
	out := make([]namePattern, len(pats))
	for i, p := range pats {
		out[i] = namePattern{p, bare(p) && !slices.ContainsFunc(all, func(s *Scenario) bool { return matchName(p, s) })}
	}
	return out
}

func (p namePattern) match(s *Scenario) bool {
	return matchName(p.pattern, s) || p.file && matchFile(p.pattern, s)
}

func (f Filter) match(s *Scenario, inc, exc []namePattern) bool {
	if len(inc) > 0 && !slices.ContainsFunc(inc, func(p namePattern) bool { return p.match(s) }) {
		return false
	}
	if slices.ContainsFunc(exc, func(p namePattern) bool { return p.match(s) }) {
		return false
	}
	b := s.Benchmark
	if len(f.Category) > 0 && !slices.Contains(f.Category, b.Category) {
		return false
	}
	if len(f.Model) > 0 && !anyGlob(f.Model, b.Model, s.Model()) {
		return false
	}
	if len(f.Tag) > 0 {
		hit := false
		for _, t := range b.Tags {
			if slices.Contains(f.Tag, t) {
				hit = true
			}
		}
		if !hit {
			return false
		}
	}
	return true
}

// matchNames reports whether an --include/--exclude pattern names the scenario on its own: a glob
// matching the benchmark's name or the scenario's ID ("llm-mock/*"), a bare name (no glob
// characters, no '/') equal to one part of the benchmark's name split at '.' and '/', as Python
// benchmark scripts write them ("--include llama_benchmark" selects llama_benchmark.LlamaBenchmark,
// ...), or a bare name equal to its file name without extension. Filter.Select decides the last
// with every scenario in view: a bare name matches file names only when it names no benchmark, so
// "--include llm-mock" selects the benchmark llm-mock and not the other benchmarks of
// llm-mock.yaml, while "--include exec-python" selects the benchmarks of exec-python.yaml.
func matchNames(pattern string, s *Scenario) bool {
	return matchName(pattern, s) || bare(pattern) && matchFile(pattern, s)
}

// matchName: pattern is a glob on the benchmark's name or the scenario's ID, or a bare name equal
// to one part of the benchmark's name.
func matchName(pattern string, s *Scenario) bool {
	b := s.Benchmark
	if glob(pattern, b.Name) || glob(pattern, s.ID()) {
		return true
	}
	return bare(pattern) && slices.Contains(strings.FieldsFunc(b.Name, func(r rune) bool { return r == '.' || r == '/' }), pattern)
}

// matchFile: pattern is the benchmark's file name without extension, or that of the Python file
// it runs (params `file:`), so that "--include llama_benchmark" still selects the class of
// llama_benchmark.py when a definition declares it (declaredWins).
func matchFile(pattern string, s *Scenario) bool {
	stem := func(f string) bool {
		return f != "" && strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)) == pattern
	}
	py, _ := s.Benchmark.Params["file"].(string)
	return stem(s.Benchmark.File) || strings.HasSuffix(py, ".py") && stem(py)
}

// bare reports whether pattern is a bare name: no glob characters and no '/'.
func bare(pattern string) bool { return pattern != "" && !strings.ContainsAny(pattern, "*?[/") }

// Unmatched returns the --include and --exclude patterns (as "--include P") that name none of
// scenarios, so a typo or a stale name is reported instead of silently selecting nothing or
// excluding nothing.
func (f Filter) Unmatched(scenarios []*Scenario) []string {
	var out []string
	check := func(flag string, pats []string) {
		for _, p := range pats {
			if !slices.ContainsFunc(scenarios, func(s *Scenario) bool { return matchNames(p, s) }) {
				out = append(out, flag+" "+p)
			}
		}
	}
	check("--include", f.Include)
	check("--exclude", f.Exclude)
	return out
}

// glob reports whether name matches pattern, where * matches any run of characters (including
// '/'), ? one character, and [...] a class.
func glob(pattern, name string) bool {
	re, err := globRegexp(pattern)
	if err != nil {
		return pattern == name
	}
	return re.MatchString(name)
}

func globRegexp(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			end := strings.IndexByte(pattern[i:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := pattern[i+1 : i+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i += end
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

func anyGlob(patterns []string, names ...string) bool {
	for _, p := range patterns {
		for _, n := range names {
			if glob(p, n) {
				return true
			}
		}
	}
	return false
}
