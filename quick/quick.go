// Package quick builds benchmark definitions from a few settings instead of YAML: a command
// (Exec), an OpenAI-compatible server (OpenAI) or a vision model in a framework worker
// (Framework). They are what `inferbench run --exec`, `--openai` and `--framework` run, and a Go
// program can hand the benchmarks they return to run.Options.Benchmarks.
//
// Every error names the command-line flag that sets the faulty field, since that is how most
// people meet these settings.
package quick

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/internal/kind/exec"
	"github.com/inferbench/inferbench/internal/kind/openai"
	"github.com/inferbench/inferbench/internal/kind/worker"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/suite"
)

// commandLineFile is the definition file quick benchmarks name as their source.
const commandLineFile = "(command line)"

// Exec is a benchmark of a command (`inferbench run --exec 'CMD'`).
type Exec struct {
	Command string // split like a shell, run without one
	Shell   bool   // run through /bin/sh -c
	Name    string // the benchmark's name; "exec" when empty
	Metrics bool   // read a JSON object of metrics from the command's last stdout line
	Dir     string // the working directory of the command
}

// Benchmarks returns the benchmark of the command.
func (q Exec) Benchmarks() ([]*suite.Benchmark, error) {
	cfg := &exec.Config{Command: q.Command, Shell: q.Shell}
	if q.Metrics {
		cfg.Metrics = "json"
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("--exec: %w", err)
	}
	name := q.Name
	if name == "" {
		name = "exec"
	}
	return []*suite.Benchmark{{Name: name, Kind: "exec", Config: cfg, File: commandLineFile, Dir: dir(q.Dir)}}, nil
}

// OpenAI is an LLM server benchmark without a definition (`inferbench run --openai URL --model m
// --concurrency 1,8,64`). Several concurrencies or rates make a matrix axis, one scenario each.
type OpenAI struct {
	URL, Model, Endpoint, APIKeyEnv string
	Concurrency                     []int
	Rates                           []float64
	Arrival                         string  // with Rates or Sweep: poisson, constant or gamma
	Burstiness                      float64 // with Arrival gamma: the shape
	Duration, RampUp                time.Duration
	MaxConcurrency                  int
	Requests                        int // measured requests per scenario or sweep step; 100 when 0
	Seed                            uint64
	SLOs                            []string // metric.stat=limit, as --slo
	Sweep, Offline                  bool
	SweepSteps                      int    // with Sweep: rates between the synchronous and the maximum
	InputTokens, OutputTokens       string // a number or a distribution: lognormal(mean=550,std=150)
	Prompts                         string // a JSONL or ShareGPT file
	SharedPrefix                    int
	NoStream, IgnoreEOS, NoUsage    bool
	Dir                             string
}

// Benchmarks returns the server benchmark.
func (q OpenAI) Benchmarks() ([]*suite.Benchmark, error) {
	if q.Model == "" {
		return nil, fmt.Errorf("--openai: give the model the server serves with --model (GET %s/models lists them)", strings.TrimSuffix(q.URL, "/"))
	}
	endpoint := q.Endpoint
	if endpoint == "" {
		endpoint = "chat"
	}
	cfg := &openai.Config{URL: q.URL, Model: q.Model, Endpoint: endpoint, APIKeyEnv: q.APIKeyEnv}
	if q.IgnoreEOS {
		cfg.IgnoreEOS = &q.IgnoreEOS
	}
	if q.NoStream {
		f := false
		cfg.Stream = &f
	}
	if q.NoUsage {
		f := false
		cfg.IncludeUsage = &f
	}
	wl := workload.Config{Seed: q.Seed, File: q.Prompts, SharedPrefix: q.SharedPrefix}
	for _, p := range []struct {
		flag, s string
		d       *workload.Dist
	}{{"--input-tokens", q.InputTokens, &wl.InputTokens}, {"--output-tokens", q.OutputTokens, &wl.OutputTokens}} {
		if p.s == "" {
			continue
		}
		d, err := workload.ParseDist(p.s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.flag, err)
		}
		*p.d = d
	}
	cfg.Workload = wl

	lc := load.Config{Seed: q.Seed, MaxConcurrency: q.MaxConcurrency, Duration: q.Duration, RampUp: q.RampUp}
	n := q.Requests
	if n <= 0 {
		n = 100
	}
	lc.MeasurementIterations = &n
	slo, err := ParseSLOs(q.SLOs)
	if err != nil {
		return nil, err
	}
	lc.SLO = slo
	modes := 0
	for _, on := range []bool{len(q.Concurrency) > 0, len(q.Rates) > 0, q.Sweep, q.Offline} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return nil, fmt.Errorf("--openai: choose one of --concurrency, --rate, --sweep and --offline")
	}
	arrival := q.Arrival
	if arrival == "" {
		arrival = "poisson"
	}
	var axes []suite.Axis
	switch {
	case len(q.Rates) > 0:
		lc.Mode, lc.Arrival, lc.Burstiness = load.ModeRate, arrival, q.Burstiness
		axes = append(axes, suite.Axis{Name: "rate", Values: anys(q.Rates)})
	case q.Sweep:
		lc.Mode, lc.Arrival, lc.Burstiness = load.ModeSweep, arrival, q.Burstiness
		// Note: the sweep no longer bisects for the highest rate meeting the SLOs (it had
		// --slo-search): capacity's search answers that with a lower bound (internal/capacity).
		lc.Sweep = &load.SweepConfig{Steps: q.SweepSteps}
	case q.Offline:
		lc.Mode = load.ModeOffline
	default:
		lc.Mode = load.ModeConcurrency
		c := q.Concurrency
		if len(c) == 0 {
			c = []int{1}
		}
		axes = append(axes, suite.Axis{Name: "concurrency", Values: anys(c)})
	}
	probe := lc
	if lc.Mode == load.ModeRate {
		probe.Rate = q.Rates[0]
	}
	if err := probe.Validate(); err != nil {
		return nil, fmt.Errorf("--openai: %w", err)
	}
	return []*suite.Benchmark{{
		Name: "openai", Model: q.Model, Category: "performance", Tags: []string{"llm", "serving"},
		Description: "OpenAI-compatible server at " + q.URL,
		Kind:        "openai", Config: cfg, File: commandLineFile, Dir: dir(q.Dir), Axes: axes, Load: lc,
	}}, nil
}

// ParseSLOs reads service-level objectives written metric.stat=limit (as --slo), e.g.
// ttft_ms.p99=500; "<=" before the limit is allowed.
func ParseSLOs(specs []string) (map[string]float64, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	m := map[string]float64{}
	for _, s := range specs {
		k, v, ok := strings.Cut(s, "=")
		limit, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), "<=")), 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("--slo %q: want metric.stat=limit, e.g. ttft_ms.p99=500", s)
		}
		if !(limit > 0) || math.IsInf(limit, 0) {
			return nil, fmt.Errorf("--slo %s: the limit %v must be above 0 and finite, e.g. ttft_ms.p99=500", s, limit)
		}
		m[strings.TrimSpace(k)] = limit
	}
	if _, err := figures.ParseSLOs(m); err != nil {
		return nil, fmt.Errorf("--slo: %w", err)
	}
	return m, nil
}

// Framework is a vision model benchmark in a framework worker without a definition (`inferbench
// run --framework pytorch --model resnet50 --batch-sizes 1 4`). Each model becomes one benchmark
// with a matrix over framework, batch size, and dtype and variant when given.
type Framework struct {
	Framework  string   // pytorch, jax or both
	Models     []string // "both" stands for BothModels; none is resnet50
	BatchSizes []int
	DTypes     []string
	Variants   []string
	Device     string // auto when empty
	ImageSize  int    // 224 when 0
	Threads    int
	Dir        string
}

// bothModels are the names the model "both" stands for.
var bothModels = []string{"resnet50", "vit_b_16"}

// ModelNames returns the models the benchmarks are named after: "both" expanded, resnet50 when
// none is given. A run selects the quick benchmarks by these names.
func (q Framework) ModelNames() []string {
	var models []string
	for _, m := range q.Models {
		if m == "both" {
			models = append(models, bothModels...)
		} else {
			models = append(models, m)
		}
	}
	if len(models) == 0 {
		models = []string{"resnet50"}
	}
	return models
}

// DTypes are the dtype names a framework benchmark takes.
func validDType(d string) bool {
	switch d {
	case "float32", "float16", "bfloat16", "fp32", "fp16", "bf16":
		return true
	}
	return false
}

// Benchmarks returns one benchmark per model.
func (q Framework) Benchmarks() ([]*suite.Benchmark, error) {
	var frameworks []any
	switch q.Framework {
	case "pytorch", "torch":
		frameworks = []any{"pytorch"}
	case "jax":
		frameworks = []any{"jax"}
	case "both":
		frameworks = []any{"pytorch", "jax"}
	default:
		return nil, fmt.Errorf("--framework %q: want pytorch, jax or both", q.Framework)
	}
	if len(q.BatchSizes) == 0 {
		return nil, fmt.Errorf("--batch-sizes: give at least one")
	}
	batches := make([]any, len(q.BatchSizes))
	for i, b := range q.BatchSizes {
		if b < 1 {
			return nil, fmt.Errorf("--batch-sizes: %d is not a positive batch size", b)
		}
		batches[i] = b
	}
	for _, d := range q.DTypes {
		if !validDType(d) {
			return nil, fmt.Errorf("--dtype %q: want float32, float16 or bfloat16", d)
		}
	}
	device, size := q.Device, q.ImageSize
	if device == "" {
		device = "auto"
	}
	if size == 0 {
		size = 224
	}
	var out []*suite.Benchmark
	for _, m := range q.ModelNames() {
		params := map[string]any{"model": m, "device": device, "image_size": size}
		if q.Threads > 0 {
			params["threads"] = q.Threads
		}
		axes := []suite.Axis{{Name: "framework", Values: frameworks}, {Name: "batch_size", Values: batches}}
		if len(q.DTypes) > 0 {
			axes = append(axes, suite.Axis{Name: "dtype", Values: anys(q.DTypes)})
		}
		if len(q.Variants) > 0 {
			axes = append(axes, suite.Axis{Name: "variant", Values: anys(q.Variants)})
		}
		out = append(out, &suite.Benchmark{
			Name: m, Model: m, Category: "performance", Tags: []string{"vision"},
			Description: fmt.Sprintf("%s inference with random weights", m),
			Kind:        "worker", Config: &worker.Config{Adapter: "vision"},
			File: commandLineFile, Dir: dir(q.Dir), Params: params, Axes: axes, Accepts: frameworkParams,
		})
	}
	return out, nil
}

// frameworkParams are the parameters of the vision adapters a --framework run takes with --set
// besides its flags: input (a folder of images, relative to the working directory: a vision
// runner's data_source), max_images, compile_mode, seed, threads, dtype, variant.
var frameworkParams = []string{"input", "max_images", "compile_mode", "seed", "threads", "dtype", "variant"}

// IsDType reports whether s names a dtype a framework benchmark takes.
func IsDType(s string) bool { return validDType(s) }

// IsVariant reports whether s names a variant a framework benchmark takes.
func IsVariant(s string) bool {
	switch s {
	case "eager", "compiled", "channels_last", "compiled_channels_last", "kernelized":
		return true
	}
	return false
}

func dir(d string) string {
	if d == "" {
		return "."
	}
	return d
}

func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
