package compare

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/inferbench/inferbench/internal/base/readall"
	"github.com/inferbench/inferbench/internal/budget"
	"github.com/inferbench/inferbench/result"
)

// Kind groups metrics that share a default threshold.
type Kind string

// Kinds.
const (
	Latency    Kind = "latency"
	Memory     Kind = "memory"
	Throughput Kind = "throughput"
	CPU        Kind = "cpu"
	Other      Kind = "other"
	// Instructions are instruction mode's counts (instructions, est_cycles): the same code
	// gives the same count, so their threshold is a fraction of a percent (counted.go).
	Instructions Kind = "instructions"
)

// KindOf classifies a metric from its name and catalogue entry (or the guess from its name): names
// mentioning cpu are CPU (but cpu_ms, an iteration's CPU time, is latency), sizes in bytes and
// names with memory or rss are memory, higher-is-better figures are throughput, lower-is-better
// times (a time unit, or latency, time, duration, elapsed in the name: a benchmark's own
// execution_time) are latency.
func KindOf(name string) Kind {
	info, _ := result.Lookup(name)
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '_' || r == '.' || r == '-' })
	has := func(ws ...string) bool {
		for _, w := range words {
			if slices.Contains(ws, w) {
				return true
			}
		}
		return false
	}
	switch {
	case name == CPUMetric:
		// An iteration's CPU time is judged as its wall time is: in a CPU-bound scenario it
		// stands for latency_ms (cpu.go), with latency's threshold.
		return Latency
	case isCount(name):
		return Instructions
	case strings.Contains(name, "cpu"):
		return CPU
	case slices.Contains([]string{"MB", "MiB", "GB", "GiB", "kB", "B"}, info.Unit) || has("memory", "mem", "rss"):
		return Memory
	case info.Better == result.Higher:
		return Throughput
	case info.Better == result.Lower && (slices.Contains([]string{"ms", "s", "µs", "ns"}, info.Unit) || has("latency", "time", "duration", "elapsed")):
		return Latency
	}
	return Other
}

// defaultThresholds are the regressions tolerated by default, in percent of the old value.
var defaultThresholds = map[Kind]float64{Latency: 15, Memory: 20, Throughput: 10, CPU: 25, Other: 15, Instructions: countThreshold}

// Thresholds say, in percent, how much worse a metric may get before a significant change counts
// as a regression. The most specific entry wins: benchmark and metric, benchmark and kind, metric,
// kind, then defaultThresholds. Metric keys are names ("ttft_ms") or name and statistic
// ("latency_ms.p95", which falls back on "latency_ms").
type Thresholds struct {
	Kinds      map[Kind]float64
	Metrics    map[string]float64
	Benchmarks map[string]map[string]float64 // benchmark → metric name or kind → percent
	// Recorded are the thresholds a scenario was gated with where it was measured
	// (result.Scenario.Thresholds), by metric name or kind: below every entry above, above
	// defaultThresholds. compare sets them per scenario.
	Recorded map[string]float64
}

// For returns the threshold of a metric row ("latency_ms" or "latency_ms.p95") of a benchmark.
func (t Thresholds) For(benchmark, metric string) float64 {
	v, _ := t.Lookup(benchmark, metric)
	return v
}

// Lookup is For, and whether an override (a --threshold, a thresholds file) gave the threshold
// rather than defaultThresholds.
func (t Thresholds) Lookup(benchmark, metric string) (float64, bool) {
	base, _, _ := strings.Cut(metric, ".")
	kind := KindOf(base)
	if b, ok := t.Benchmarks[benchmark]; ok {
		for _, k := range []string{metric, base, string(kind)} {
			if v, ok := b[k]; ok {
				return v, true
			}
		}
	}
	for _, k := range []string{metric, base} {
		if v, ok := t.Metrics[k]; ok {
			return v, true
		}
	}
	if v, ok := t.Kinds[kind]; ok {
		return v, true
	}
	for _, k := range []string{metric, base, string(kind)} {
		if v, ok := t.Recorded[k]; ok {
			return v, true
		}
	}
	return defaultThresholds[kind], false
}

// Set parses one override, "[BENCHMARK:]METRIC_OR_KIND=PERCENT" (latency=10, ttft_ms=5,
// resnet:latency_ms.p95=8), as the --threshold flag gives it.
func (t *Thresholds) Set(s string) error {
	key, val, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("threshold %q: want [BENCHMARK:]METRIC=PERCENT, e.g. latency=10 or resnet:ttft_ms=5", s)
	}
	pct, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(val), "%"), 64)
	if err != nil || !validPercent(pct) {
		return fmt.Errorf("threshold %q: %q is not a finite, non-negative percentage", s, val)
	}
	bench, metric, scoped := strings.Cut(key, ":")
	if !scoped {
		metric, bench = bench, ""
	}
	switch {
	case bench != "":
		if t.Benchmarks == nil {
			t.Benchmarks = map[string]map[string]float64{}
		}
		if t.Benchmarks[bench] == nil {
			t.Benchmarks[bench] = map[string]float64{}
		}
		t.Benchmarks[bench][metric] = pct
	case isKind(metric):
		if t.Kinds == nil {
			t.Kinds = map[Kind]float64{}
		}
		t.Kinds[Kind(metric)] = pct
	default:
		if t.Metrics == nil {
			t.Metrics = map[string]float64{}
		}
		t.Metrics[metric] = pct
	}
	return nil
}

func isKind(s string) bool {
	switch Kind(s) {
	case Latency, Memory, Throughput, CPU, Other:
		return true
	}
	return false
}

// thresholdsFile is the format of benchmark_thresholds.json: regressions tolerated, in percent.
// The four *_regression_threshold keys are those other tools use; metrics and benchmarks are
// inferbench's finer overrides.
type thresholdsFile struct {
	Latency    *float64                      `json:"latency_regression_threshold"`
	Memory     *float64                      `json:"memory_regression_threshold"`
	Throughput *float64                      `json:"throughput_regression_threshold"`
	CPU        *float64                      `json:"cpu_regression_threshold"`
	Percent    *bool                         `json:"percent"` // values are percentages (the only unit; false is an error)
	Metrics    map[string]float64            `json:"metrics"`
	Benchmarks map[string]map[string]float64 `json:"benchmarks"`
}

// LoadFile reads a benchmark_thresholds.json into t. Unknown keys are errors naming the file,
// line and column. The file is JSON; "# ..." comments after a value, as the seed documents write
// them, are allowed.
func (t *Thresholds) LoadFile(file string) error {
	data, err := readall.File(file, readall.ConfigLimit)
	if err != nil {
		return err
	}
	return t.parseFile(file, data)
}

// parseFile reads the benchmark_thresholds.json data of file into t; on an error t is left as
// it was.
func (t *Thresholds) parseFile(file string, data []byte) error {
	var f thresholdsFile
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.DisallowUnknownField()); err != nil {
		return fileError(file, err, "keys: latency_regression_threshold, memory_regression_threshold, throughput_regression_threshold, cpu_regression_threshold, percent, metrics, benchmarks")
	}
	if f.Percent != nil && !*f.Percent {
		return fmt.Errorf("%s: \"percent\": false is not supported: thresholds are percentages (15 means +15%%)", file)
	}
	if t.Kinds == nil {
		t.Kinds = map[Kind]float64{}
	}
	// Every threshold is checked before any is kept: NaN would make every change pass, Inf too.
	bad := func(key string, v float64) error {
		return fmt.Errorf("%s:%d: %s = %v: want a finite percentage, 0 or more (15 means +15%%)", file, lineOf(data, key), key, v)
	}
	kinds := map[Kind]*float64{Latency: f.Latency, Memory: f.Memory, Throughput: f.Throughput, CPU: f.CPU}
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		if v := kinds[k]; v != nil && !validPercent(*v) {
			return bad(string(k)+"_regression_threshold", *v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(f.Metrics)) {
		if v := f.Metrics[k]; !validPercent(v) {
			return bad(k, v)
		}
	}
	for _, b := range slices.Sorted(maps.Keys(f.Benchmarks)) {
		for _, k := range slices.Sorted(maps.Keys(f.Benchmarks[b])) {
			if v := f.Benchmarks[b][k]; !validPercent(v) {
				return bad(k, v)
			}
		}
	}
	for k, v := range kinds {
		if v != nil {
			t.Kinds[k] = *v
		}
	}
	for k, v := range f.Metrics {
		if t.Metrics == nil {
			t.Metrics = map[string]float64{}
		}
		t.Metrics[k] = v
	}
	for b, m := range f.Benchmarks {
		if t.Benchmarks == nil {
			t.Benchmarks = map[string]map[string]float64{}
		}
		t.Benchmarks[b] = m
	}
	return nil
}

// validPercent reports whether p can be a regression threshold: finite and not negative.
func validPercent(p float64) bool { return p >= 0 && !math.IsInf(p, 1) }

// BudgetFile is the format of performance-budget.yml: limits per benchmark or scenario. Keys are
// benchmark names, scenario IDs ("resnet/batch_size=8") or globs of either ("resnet/*").
//
//	budgets:
//	  mobile_inference: {max_latency_ms: 250, max_memory_mb: 512, max_cpu_percent: 70}
type BudgetFile struct {
	Budgets map[string]BudgetLimits `yaml:"budgets"`
	// Name is the file as budget lines name it (the --budget-file the user gave); empty is
	// performance-budget.yml.
	Name string `yaml:"-"`
}

// source is the file as budget lines name it.
func (f *BudgetFile) source() string {
	if f == nil || f.Name == "" {
		return budgetFileName
	}
	return f.Name
}

// BudgetLimits are one entry of performance-budget.yml. max_latency_ms bounds the p95 of
// latency_ms (or of e2e_ms for LLM requests); max_memory_mb the peak memory_mb the subject
// reports, else the resource monitors' peak_rss_mb; max_cpu_percent cpu_pct, the process tree's
// mean CPU in percent of one core (the resource monitor's figure). A key whose metric the
// scenario lacks (monitors off) is reported as not measured, with a warning, and not checked.
// Budgets is the definition syntax for anything else, ratio budgets between scenarios included.
type BudgetLimits struct {
	MaxLatencyMS  *float64          `yaml:"max_latency_ms"`
	MaxMemoryMB   *float64          `yaml:"max_memory_mb"`
	MaxCPUPercent *float64          `yaml:"max_cpu_percent"`
	Budgets       map[string]string `yaml:"budgets"`
}

// budgetFileName names a budget file in budget lines when its caller gave no name (the command
// line reads the file of this name from the project directory when present).
const budgetFileName = "performance-budget.yml"

// LoadBudgetFile reads a performance-budget.yml. Unknown keys are errors with their line.
func LoadBudgetFile(file string) (*BudgetFile, error) {
	data, err := readall.File(file, readall.ConfigLimit)
	if err != nil {
		return nil, err
	}
	return parseBudgetFile(file, data)
}

// parseBudgetFile reads the performance-budget.yml data of file.
func parseBudgetFile(file string, data []byte) (*BudgetFile, error) {
	var f BudgetFile
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.DisallowUnknownField()); err != nil {
		return nil, fileError(file, err, "keys of a budget: max_latency_ms, max_memory_mb, max_cpu_percent, budgets")
	}
	for _, k := range slices.Sorted(maps.Keys(f.Budgets)) {
		b := f.Budgets[k]
		for _, l := range []struct {
			key string
			v   *float64
		}{{"max_latency_ms", b.MaxLatencyMS}, {"max_memory_mb", b.MaxMemoryMB}, {"max_cpu_percent", b.MaxCPUPercent}} {
			if l.v != nil && (math.IsNaN(*l.v) || math.IsInf(*l.v, 0) || *l.v < 0) {
				return nil, fmt.Errorf("%s:%d: budgets: %s: %s = %v: want a finite number, not negative", file, lineOf(data, l.key), k, l.key, *l.v)
			}
		}
		for _, m := range slices.Sorted(maps.Keys(f.Budgets[k].Budgets)) {
			e := f.Budgets[k].Budgets[m]
			if _, _, err := budget.ParseBudget(e); err != nil {
				return nil, fmt.Errorf("%s:%d: budgets: %s: %s: %w", file, lineOf(data, m), k, m, err)
			}
			if budget.IsRatioBudget(m) {
				if _, err := budget.ParseRatio(m); err != nil {
					return nil, fmt.Errorf("%s:%d: budgets: %s: %w", file, lineOf(data, m), k, err)
				}
			}
		}
	}
	return &f, nil
}

// fileError turns a decoding error of file into "file:line:col: message (hint)", with the
// source excerpt the decoder gives on the following lines.
func fileError(file string, err error, hint string) error {
	msg := yaml.FormatError(err, false, false)
	first, rest, _ := strings.Cut(msg, "\n")
	if m := yamlPos.FindStringSubmatch(first); m != nil {
		first = fmt.Sprintf("%s:%s:%s: %s", file, m[1], m[2], strings.TrimSpace(first[len(m[0]):]))
	} else {
		first = file + ": " + first
	}
	first = strings.Replace(first, "unknown field", "unknown key", 1)
	if hint != "" {
		first += " (" + hint + ")"
	}
	if rest != "" {
		return fmt.Errorf("%s\n%s", first, rest)
	}
	return errors.New(first)
}

var yamlPos = regexp.MustCompile(`^\[(\d+):(\d+)\]`)

// lineOf returns the line of the first occurrence of key in data, 0 when it is not there.
func lineOf(data []byte, key string) int {
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return 0
	}
	return 1 + bytes.Count(data[:i], []byte("\n"))
}

// For returns the budget expressions ("latency_ms.p95" → "<= 250") that apply to a scenario.
// The order of application is the sorted key order; a more specific key (a scenario ID) given
// later overrides a benchmark-wide one.
func (f *BudgetFile) For(s *result.Scenario) map[string]string {
	if f == nil {
		return nil
	}
	keys := make([]string, 0, len(f.Budgets))
	for k := range f.Budgets {
		keys = append(keys, k)
	}
	// Benchmark-wide keys first, then scenario keys.
	sort.Slice(keys, func(a, b int) bool {
		sa, sb := strings.Contains(keys[a], "/"), strings.Contains(keys[b], "/")
		if sa != sb {
			return !sa
		}
		return keys[a] < keys[b]
	})
	var out map[string]string
	for _, k := range keys {
		if !matches(k, s) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		l := f.Budgets[k]
		if l.MaxLatencyMS != nil {
			metric := "latency_ms.p95"
			if _, ok := s.Metrics["latency_ms"]; !ok {
				if _, ok := s.Metrics["e2e_ms"]; ok {
					metric = "e2e_ms.p95"
				}
			}
			out[metric] = "<= " + fmtNum(*l.MaxLatencyMS)
		}
		if l.MaxMemoryMB != nil {
			out[memoryBudgetMetric(s)] = "<= " + fmtNum(*l.MaxMemoryMB)
		}
		if l.MaxCPUPercent != nil {
			out["cpu_pct"] = "<= " + fmtNum(*l.MaxCPUPercent)
		}
		for m, e := range l.Budgets {
			out[m] = e
		}
	}
	return out
}

// memoryBudgetMetric is the metric max_memory_mb bounds in s: the subject's own peak memory_mb
// (workers, the mock) when it reports one, else the resource monitors' peak_rss_mb (exec
// commands, Go functions, clients of servers: every subject the monitors ran beside). With
// neither (--no-monitor), memory_mb.max, which CheckBudgets reports as not measured.
func memoryBudgetMetric(s *result.Scenario) string {
	if _, ok := s.Metrics["memory_mb"]; ok {
		return "memory_mb.max"
	}
	if _, ok := s.Metrics["peak_rss_mb"]; ok {
		return "peak_rss_mb"
	}
	return "memory_mb.max"
}

func matches(pattern string, s *result.Scenario) bool {
	for _, name := range []string{s.Benchmark, s.ID()} {
		if pattern == name {
			return true
		}
		if ok, _ := path.Match(pattern, name); ok {
			return true
		}
	}
	return false
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
