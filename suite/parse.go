package suite

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/inferbench/inferbench/internal/base/inert"
	"github.com/inferbench/inferbench/internal/base/readall"
	"github.com/inferbench/inferbench/internal/budget"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// This file holds the reading of a definition file: ParseFile and Parse, one benchmark per YAML
// document (parseDoc), its subject block (decodeSubject) and its model (modelParam). keys.go holds
// the strict key checks and the lookups in the YAML tree, env.go the ${VAR} expansion, errors.go
// how a problem becomes an Error with its position.

// parseFile reads one definition file. A file holds one benchmark per YAML document. Every problem
// found is returned as Errors; benchmarks without problems are returned beside them.
func parseFile(path string, env func(string) (string, bool)) ([]*Benchmark, error) {
	data, err := readBounded(path)
	if err != nil {
		// The error names path itself (os, readall): the Error's prefix names it once.
		return nil, Errors{{File: path, Msg: strings.TrimPrefix(strings.TrimPrefix(err.Error(), "open "), path+" ")}}
	}
	if p := fileType(filepath.Ext(path)); p != nil {
		bs, err := p(path, data)
		for _, b := range bs {
			if b.Category == "" {
				b.Category = categoryFromPath(path)
			}
		}
		return bs, err
	}
	bs, err := Parse(path, data, env)
	if m := modelFromPath(path); m != "" {
		for _, b := range bs {
			if b.Model == "" {
				b.Model = m
			}
		}
	}
	return bs, err
}

// readBounded reads a definition file of at most MaxFileSize bytes.
func readBounded(path string) ([]byte, error) {
	f, err := readall.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("definition file is over the limit of %d bytes (MaxFileSize)", maxFileSize)
	}
	return data, nil
}

// Parse decodes definitions from data; path names the file in errors and resolves relative paths.
// env looks up ${VAR} references (os.LookupEnv when nil).
func Parse(path string, data []byte, env func(string) (string, bool)) ([]*Benchmark, error) {
	if env == nil {
		env = os.LookupEnv
	}
	f, perr := parseYAML(path, data)
	if perr != nil {
		return nil, Errors{perr}
	}
	var benches []*Benchmark
	var errs Errors
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if e := checkAliases(path, doc.Body); e != nil {
			errs = append(errs, e)
			continue
		}
		b, derrs := parseDocSafe(path, doc.Body, env)
		errs = append(errs, derrs...)
		if b != nil && len(derrs) == 0 {
			benches = append(benches, b)
		}
	}
	if len(benches) == 0 && len(errs) == 0 {
		errs = append(errs, &Error{File: path, Msg: "no benchmark definition in file"})
	}
	if len(errs) > 0 {
		return benches, errs
	}
	return benches, nil
}

// parseYAML checks data's bounds and parses it, recovering from a panic in the YAML library.
func parseYAML(path string, data []byte) (f *ast.File, e *Error) {
	defer func() {
		if r := recover(); r != nil {
			f, e = nil, &Error{File: path, Msg: fmt.Sprintf("the YAML library failed on this file (%v)", r)}
		}
	}()
	if e := checkTokens(path, data); e != nil {
		return nil, e
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlError(path, err)
	}
	return f, nil
}

// parseDocSafe is parseDoc, recovering from a panic in the YAML library's decoder.
func parseDocSafe(path string, body ast.Node, env func(string) (string, bool)) (b *Benchmark, errs Errors) {
	defer recovered(path, startOf(body), &errs)
	return parseDoc(path, body, env)
}

// parseDoc turns one YAML document into a Benchmark: its keys checked against definition, its
// values decoded and each part checked, every error it finds at its line.
func parseDoc(path string, body ast.Node, env func(string) (string, bool)) (*Benchmark, Errors) {
	if body.Type() != ast.MappingType {
		return nil, Errors{at(path, body, "a benchmark definition must be a mapping of keys (name:, subject:, ...)", "")}
	}
	var errs Errors
	errs = append(errs, expandEnv(path, body, env)...)
	errs = append(errs, checkKeys(path, body, reflect.TypeFor[definition]())...)
	if len(errs) > 0 {
		return nil, errs
	}
	if errs := checkNumbers(path, body); len(errs) > 0 {
		return nil, errs
	}
	var d definition
	if err := yaml.NodeToValue(body, &d, yaml.DisallowUnknownField()); err != nil {
		return nil, Errors{yamlErrorIn(path, body, err)}
	}
	if errs := checkDecoded(path, body, reflect.ValueOf(d), "definition"); len(errs) > 0 {
		return nil, errs
	}
	b := &Benchmark{
		Name: d.Name, Description: d.Description, Category: d.Category, Model: d.Model,
		Tags: d.Tags, File: path, Line: startOf(body).GetToken().Position.Line, Dir: filepath.Dir(path),
		Params: normalizeMap(d.Params), Load: d.Load, Requires: d.Requires,
		Budgets: d.Budgets, Metrics: d.Metrics, Gate: d.Gate, Strict: d.Strict, Skip: d.Skip, Server: d.Server,
	}
	errs = append(errs, checkJudging(path, body, d, b)...)
	if b.Name == "" {
		errs = append(errs, at(path, startOf(body), `missing "name"`, ""))
	} else if strings.ContainsAny(b.Name, "/ \t") || inert.Text(b.Name) != b.Name {
		errs = append(errs, at(path, valueNode(body, "name"), fmt.Sprintf("name %q may not contain '/', spaces or control characters", b.Name), ""))
	}
	if b.Category == "" {
		b.Category = categoryFromPath(path)
	} else if !slices.Contains(categories, b.Category) {
		errs = append(errs, at(path, valueNode(body, "category"), fmt.Sprintf("unknown category %q", b.Category), hint(b.Category, categories)))
	}
	errs = append(errs, decodeSubject(path, body, d.Subject, b)...)
	errs = append(errs, modelParam(path, body, d, b)...)
	errs = append(errs, parseMatrix(path, body, d, b)...)
	if len(errs) == 0 {
		if e := sameNames(path, body, b); e != nil {
			errs = append(errs, e)
		}
	}
	errs = append(errs, checkRunKeys(path, body, b)...)
	if len(errs) > 0 {
		return nil, errs
	}
	return b, nil
}

// checkJudging checks the keys that say how the benchmark is judged: measure (setting
// b.Measure), gate, budgets and the metrics' better directions.
func checkJudging(path string, body ast.Node, d definition, b *Benchmark) Errors {
	var errs Errors
	if m, err := ParseMeasure(d.Measure); err != nil {
		errs = append(errs, at(path, valueNode(body, "measure"), err.Error(), "instructions counts them under valgrind's callgrind; time (the default) times them"))
	} else {
		b.Measure = m
	}
	for i, g := range d.Gate {
		if _, err := budget.ParseGate(g); err != nil || strings.Contains(g, ":") {
			msg := fmt.Sprintf("gate: %q: want a metric name (latency_ms, peak_rss_mb, latency_ms.p99) or all", g)
			errs = append(errs, at(path, seqItem(valueNode(body, "gate"), i), msg, ""))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(d.Budgets)) {
		node := valueNode(valueNode(body, "budgets"), k)
		if _, _, err := budget.ParseBudget(d.Budgets[k]); err != nil {
			errs = append(errs, at(path, node, fmt.Sprintf("budgets: %s: %v", k, err), ""))
		}
		if budget.IsRatioBudget(k) {
			if _, err := budget.ParseRatio(k); err != nil {
				errs = append(errs, at(path, node, "budgets: "+err.Error(), ""))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(d.Metrics)) {
		if m := d.Metrics[name]; m.Better != "" {
			if _, err := result.ParseDirection(m.Better); err != nil {
				errs = append(errs, at(path, valueNode(valueNode(valueNode(body, "metrics"), name), "better"), fmt.Sprintf("metrics: %s: %v", name, err), ""))
			}
		}
	}
	return errs
}

// parseMatrix sets b's matrix axes, exclude and include from d, each axis's values told apart
// as the scenario names print them, and no more than MaxScenarios scenarios in all.
func parseMatrix(path string, body ast.Node, d definition, b *Benchmark) Errors {
	var errs Errors
	for _, item := range d.Matrix {
		name := fmt.Sprint(item.Key)
		vals, ok := item.Value.([]any)
		if !ok || len(vals) == 0 {
			errs = append(errs, at(path, valueNode(valueNode(body, "matrix"), name), fmt.Sprintf("matrix axis %q must be a non-empty list of values", name), ""))
			continue
		}
		seen := map[string]int{}
		for i := range vals {
			vals[i] = normalize(vals[i])
			// Scenario names print values with %v: 1, "1" and 1.0 would make one name twice.
			key := formatValue(vals[i])
			if j, dup := seen[key]; dup {
				errs = append(errs, at(path, valueNode(valueNode(body, "matrix"), name),
					fmt.Sprintf("matrix axis %q: values %d and %d both print as %q, so two scenarios would have one name", name, j+1, i+1, key), "give each value once"))
				break
			}
			seen[key] = i
		}
		b.Axes = append(b.Axes, Axis{Name: name, Values: vals})
	}
	points := 1
	for _, a := range b.Axes {
		if points *= len(a.Values); points > MaxScenarios {
			errs = append(errs, at(path, valueNode(body, "matrix"),
				fmt.Sprintf("the matrix has more than %d points (MaxScenarios)", MaxScenarios), "split the benchmark, or use exclude/include"))
			break
		}
	}
	if points <= MaxScenarios && points+len(d.Include) > MaxScenarios {
		errs = append(errs, at(path, valueNode(body, "include"),
			fmt.Sprintf("the matrix and include make more than %d scenarios (MaxScenarios)", MaxScenarios), "split the benchmark"))
	}
	for _, m := range d.Exclude {
		b.Exclude = append(b.Exclude, normalizeMap(m))
	}
	for _, m := range d.Include {
		b.Include = append(b.Include, normalizeMap(m))
	}
	return errs
}

// sameNames returns the error of the first two scenarios of b that would have one name (nil
// when none would). Each axis's values print apart (parseMatrix), but a value holding '/' or
// '=' can still read as the values of other axes: the whole names must differ.
func sameNames(path string, body ast.Node, b *Benchmark) *Error {
	var e *Error
	b.points(func(p, q []KV, include int) {
		if e == nil {
			n := valueNode(body, "matrix")
			if s, ok := valueNode(body, "include").(*ast.SequenceNode); ok && include >= 0 && include < len(s.Values) {
				n = s.Values[include]
			}
			e = at(path, n, fmt.Sprintf("scenarios %s and %s are both named %q", pointText(p), pointText(q), pointName(p)),
				"a value holding '/' or '=' reads as other parameters: change one")
		}
	})
	return e
}

// checkRunKeys checks the keys of how the benchmark runs: load, server and requires.
func checkRunKeys(path string, body ast.Node, b *Benchmark) Errors {
	var errs Errors
	if err := b.Load.Validate(); err != nil {
		errs = append(errs, at(path, valueNode(body, "load"), err.Error(), ""))
	}
	if b.Server != nil {
		if err := b.Server.Validate(); err != nil {
			errs = append(errs, at(path, valueNode(body, "server"), err.Error(), ""))
		}
	}
	for _, r := range b.Requires {
		if _, _, err := parseRequirement(r); err != nil {
			errs = append(errs, at(path, valueNode(body, "requires"), err.Error(), ""))
		}
	}
	return errs
}

// modelParam makes a definition's model: key the default of its model parameter when the
// subject builds the model that parameter names (its configuration says so with ModelParam: the
// worker's torch_vision, jax_vision and onnxruntime adapters): params, a matrix axis, include or
// --set override it per scenario (Scenario.Model). For other subjects model: stays a label, and
// their scenarios' parameters (their identity in the history) are unchanged. A subject that names
// its own model (openai's subject.model) must name the same one.
func modelParam(path string, body ast.Node, d definition, b *Benchmark) Errors {
	if d.Model == "" {
		return nil
	}
	if sm, ok := d.Subject["model"]; ok {
		if s, _ := sm.(string); s != d.Model {
			return Errors{at(path, valueNode(body, "model"), fmt.Sprintf("model %q but subject.model %q: the subject runs %q", d.Model, fmt.Sprint(sm), fmt.Sprint(sm)), "give one model, or the same in both")}
		}
		return nil
	}
	if mp, ok := b.Config.(interface{ ModelParam() bool }); !ok || !mp.ModelParam() {
		return nil
	}
	if _, ok := b.Params["model"]; ok {
		return nil
	}
	if b.Params == nil {
		b.Params = map[string]any{}
	}
	b.Params["model"] = d.Model
	return nil
}

// decodeSubject decodes the subject block into its kind's configuration, strictly.
func decodeSubject(path string, body ast.Node, raw map[string]any, b *Benchmark) Errors {
	node := valueNode(body, "subject")
	if node == nil {
		return Errors{at(path, startOf(body), `missing "subject" (e.g. subject: {kind: exec, command: [...]})`, "")}
	}
	kindName, _ := raw["kind"].(string)
	k, ok := subject.Lookup(kindName)
	if !ok {
		msg := fmt.Sprintf("unknown subject kind %q (known: %s)", kindName, strings.Join(subject.Kinds(), ", "))
		if kindName == "" {
			msg = fmt.Sprintf(`subject needs a "kind" (one of: %s)`, strings.Join(subject.Kinds(), ", "))
		}
		n := valueNode(node, "kind")
		if n == nil {
			n = node
		}
		return Errors{at(path, n, msg, hint(kindName, subject.Kinds()))}
	}
	b.Kind = kindName
	if k.Config == nil {
		if len(raw) > 1 {
			return Errors{at(path, node, fmt.Sprintf("subject kind %q takes no configuration", kindName), "")}
		}
		return nil
	}
	cfg := k.Config()
	if errs := checkKeysExcept(path, node, reflect.TypeOf(cfg).Elem(), "kind"); len(errs) > 0 {
		return errs
	}
	if err := yaml.NodeToValue(node, cfg); err != nil {
		return Errors{yamlErrorIn(path, node, err)}
	}
	if errs := checkDecoded(path, node, reflect.ValueOf(cfg), "subject"); len(errs) > 0 {
		return errs
	}
	if v, ok := cfg.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return Errors{at(path, node, fmt.Sprintf("subject %s: %v", kindName, err), "")}
		}
	}
	b.Config = cfg
	return nil
}

// categoryFromPath returns the category named by a directory in path, or "".
func categoryFromPath(path string) string {
	parts := strings.Split(filepath.ToSlash(filepath.Dir(path)), "/")
	for i := len(parts) - 1; i >= 0; i-- {
		if slices.Contains(categories, parts[i]) {
			return parts[i]
		}
	}
	return ""
}

// normalize makes YAML scalars comparable: every integer becomes int.
func normalize(v any) any {
	switch x := v.(type) {
	case uint64:
		return int(x)
	case int64:
		return int(x)
	case uint:
		return int(x)
	case int32:
		return int(x)
	case float32:
		return float64(x)
	case map[string]any:
		return normalizeMap(x)
	case []any:
		for i := range x {
			x[i] = normalize(x[i])
		}
		return x
	}
	return v
}

func normalizeMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = normalize(v)
	}
	return out
}

// ParseValue reads a --set value as a YAML scalar: "8" is an int, "true" a bool, "fp16" a string.
func ParseValue(s string) any {
	if i, err := strconv.Atoi(s); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f // "NaN", "Inf" and "1e400" stay text: a parameter is never a non-finite number
	}
	if b, err := strconv.ParseBool(s); err == nil {
		return b
	}
	return s
}
