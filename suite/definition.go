package suite

import (
	"fmt"
	"strconv"

	"github.com/goccy/go-yaml"
	"github.com/inferbench/inferbench/launch"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/subject"
)

// categories a benchmark can have; a directory of that name gives it.
var categories = []string{"unit", "integration", "performance"}

// definition is the YAML shape of one benchmark. Keys are checked strictly against its fields.
type definition struct {
	Name        string                        `yaml:"name"`
	Description string                        `yaml:"description"`
	Category    string                        `yaml:"category"`
	Model       string                        `yaml:"model"`
	Tags        []string                      `yaml:"tags"`
	Subject     map[string]any                `yaml:"subject"`
	Params      map[string]any                `yaml:"params"`
	Matrix      yaml.MapSlice                 `yaml:"matrix"`
	Exclude     []map[string]any              `yaml:"exclude"`
	Include     []map[string]any              `yaml:"include"`
	Load        load.Config                   `yaml:"load"`
	Requires    []string                      `yaml:"requires"`
	Budgets     map[string]string             `yaml:"budgets"`
	Metrics     map[string]subject.MetricInfo `yaml:"metrics"`
	Gate        []string                      `yaml:"gate"`
	Strict      bool                          `yaml:"strict"`
	Measure     string                        `yaml:"measure"`
	Skip        string                        `yaml:"skip"`
	Server      *launch.Config                `yaml:"server"`
}

// Benchmark is one decoded definition.
type Benchmark struct {
	Name        string
	Description string
	Category    string
	Model       string
	Tags        []string
	File        string // path of the definition file
	Line        int    // line of the definition in File
	Dir         string // directory of File
	Kind        string // subject kind
	Config      any    // the subject kind's decoded configuration
	Params      map[string]any
	// Accepts are parameters the subject reads besides Params and the axes, which --set may
	// give (a quick --framework run's input: a folder of images).
	Accepts  []string
	Axes     []Axis
	Exclude  []map[string]any
	Include  []map[string]any
	Load     load.Config
	Requires []string
	// Budgets are limits per metric, e.g. "latency_ms.p95": "<= 25".
	Budgets map[string]string
	// Metrics declare the unit and better direction of metrics the benchmark reports itself
	// (`metrics: {throughput: {unit: items/s, better: higher}}`).
	Metrics map[string]subject.MetricInfo
	// Gate names the metrics whose regression fails a comparison (`gate: [latency_ms,
	// peak_rss_mb]`), in place of the subject kind's primary metrics (compare's defaultGate).
	Gate []string
	// Strict fails a comparison on a gated change beyond its threshold that could not be
	// tested (one value a side), as --strict does for every benchmark (`strict: true`).
	Strict bool
	// Measure is how the scenarios are measured: "" (time) or subject.MeasureInstructions (`measure:
	// instructions`: counted under valgrind's callgrind). --measure overrides it.
	Measure string
	// Skip, when set, skips every scenario with this reason.
	Skip string
	// Server, when set, is started before each scenario (and shared by consecutive scenarios
	// with the same rendered command): the server under test.
	Server *launch.Config
}

// ParseMeasure checks a `measure:` value or --measure flag: "time" (the default, returned as "")
// or "instructions".
func ParseMeasure(s string) (string, error) {
	switch s {
	case "", "time":
		return "", nil
	case subject.MeasureInstructions:
		return s, nil
	}
	return "", fmt.Errorf("measure %q: want time or instructions", s)
}

// Source returns "file:line".
func (b *Benchmark) Source() string {
	if b.Line == 0 {
		return b.File
	}
	return b.File + ":" + strconv.Itoa(b.Line)
}

// Axis is one dimension of the matrix, in definition order.
type Axis struct {
	Name   string
	Values []any
}

// Scenario is one point of a benchmark's matrix: what the engine runs.
type Scenario struct {
	Benchmark *Benchmark
	Name      string // "batch_size=8/variant=compiled", or "default" without a matrix
	Point     []KV   // the matrix point, in axis order
	Params    subject.Params
	// Skip is the reason the scenario will not run; empty when it runs.
	Skip string
}

// KV is one parameter of a matrix point.
type KV struct {
	Key   string
	Value any
}

// Model returns the model the scenario runs: its model parameter when it has one (the
// definition's model: key, params, a matrix axis, --set), else the benchmark's model (its
// models/NAME/ folder, a Python file's name).
func (s *Scenario) Model() string {
	if m, ok := s.Params["model"].(string); ok && m != "" {
		return m
	}
	return s.Benchmark.Model
}

// ID returns "benchmark/scenario".
func (s *Scenario) ID() string { return s.Benchmark.Name + "/" + s.Name }
