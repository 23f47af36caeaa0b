package worker

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// DefaultPython is the interpreter workers run under when neither the definition nor the
// environment names one (pyenv.Find: $INFERBENCH_PYTHON, the active virtual environment, python3
// on PATH): Debian's, the one that sees Debian's python3-torch.
const DefaultPython = pyenv.Fallback

// Protocol is the protocol version this package speaks.
const Protocol = 1

// Adapters are the adapters of the bundled Python worker, with the Python modules each needs.
var Adapters = map[string][]string{
	"noop":         nil,
	"pyfunc":       nil,
	"pytest":       {"pytest"},
	"torch_vision": {"torch", "torchvision"},
	"torch_llm":    {"torch"},
	"jax_vision":   {"jax", "flax"},
	"onnxruntime":  {"onnxruntime", "numpy"},
}

// Optional are modules some variants of an adapter use (doctor lists them): the torch_llm
// transformers backend and its kernelized variant, ONNX export for onnxruntime models.
var Optional = map[string][]string{
	"torch_llm":   {"transformers", "kernels"},
	"onnxruntime": {"onnx"},
}

// Families are adapter names resolved per scenario by its "framework" parameter (default
// pytorch), so that one definition can have a framework axis.
var Families = map[string]map[string]string{
	"vision": {"pytorch": "torch_vision", "torch": "torch_vision", "jax": "jax_vision"},
	"llm":    {"pytorch": "torch_llm", "torch": "torch_llm"},
}

// adapterFor returns the adapter that runs a scenario with params p: c.Adapter, or the member of
// its family named by p's framework.
func (c *Config) adapterFor(p subject.Params) (string, error) {
	fam, ok := Families[c.Adapter]
	if !ok {
		return c.Adapter, nil
	}
	fw := p.String("framework", "pytorch")
	a, ok := fam[fw]
	if !ok {
		names := slices.Sorted(maps.Keys(fam))
		return "", fmt.Errorf("adapter %s: framework %q has none (one of %s)", c.Adapter, fw, strings.Join(names, ", "))
	}
	return a, nil
}

// Config is the `subject:` block of a worker definition.
type Config struct {
	// Adapter names the adapter: noop, torch_vision, torch_llm, jax_vision, onnxruntime, pyfunc,
	// or a family (vision, llm) resolved by the scenario's framework parameter.
	Adapter string `yaml:"adapter"`
	// imports are the modules a benchmark file found by discovery imports at its top level and
	// that are not files of the project (ParsePythonFile): each is a requirement, so that list
	// names the skip that run makes when one is missing.
	imports []string
	// Python is the interpreter (default: $INFERBENCH_PYTHON, else the active virtual
	// environment's, else python3 on PATH, else /usr/bin/python3; see package pyenv).
	Python string `yaml:"python"`
	// Module is the Python module run with -m (default inferbench_worker).
	Module string `yaml:"module"`
	// Script runs a Python file as the worker instead of Module (relative to the definition).
	Script string `yaml:"script"`
	// Path is put first on PYTHONPATH (relative to the definition). Default: the copy of
	// inferbench_worker embedded in this binary, unpacked into the user's cache directory.
	// The definition's project root (pyenv.ProjectRoot) follows it, so that benchmark code
	// imports its project's modules as it would when run from the root.
	Path string `yaml:"path"`
	// Command runs a worker written in any language (argv). Its program is a file of the
	// definition's folder when it contains a slash or names a file there (never a program of the
	// same name on $PATH); other bare names (python3) are looked up on $PATH. Python, Module,
	// Script and Path are then unused.
	Command []string `yaml:"command"`
	// Env adds environment variables (e.g. OMP_NUM_THREADS, CUDA_VISIBLE_DEVICES).
	Env map[string]string `yaml:"env"`
	// Timeouts bound each phase; zero means the default.
	Timeouts Timeouts `yaml:"timeouts"`
}

// Timeouts bound the phases of a worker's life. The run phase is also bounded by the context the
// load driver gives each call.
type Timeouts struct {
	Start     time.Duration `yaml:"start"`     // process start and hello (default 2m: imports)
	Setup     time.Duration `yaml:"setup"`     // model build, first call, compilation (default 30m)
	Iteration time.Duration `yaml:"iteration"` // per iteration of a batch (default: none of its own)
	Teardown  time.Duration `yaml:"teardown"`  // teardown and exit (default 30s)
}

// Defaults for Timeouts.
const (
	DefaultStartTimeout    = 2 * time.Minute
	DefaultSetupTimeout    = 30 * time.Minute
	DefaultTeardownTimeout = 30 * time.Second
)

// ModelParam reports whether the adapter builds the model its "model" parameter names (a
// torchvision or Flax network, an ONNX file), so that a definition's model: key is that
// parameter's default (suite: what names a scenario is what ran).
func (c *Config) ModelParam() bool {
	if len(c.Command) > 0 || c.Module != "" || c.Script != "" {
		return false
	}
	switch c.Adapter {
	case "torch_vision", "jax_vision", "onnxruntime", "vision":
		return true
	}
	return false
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if len(c.Command) == 0 && c.Adapter == "" {
		return errors.New(`missing "adapter" (one of ` + strings.Join(adapterNames(), ", ") + `)`)
	}
	if len(c.Command) == 0 && c.Module == "" && c.Script == "" && c.Path == "" {
		_, family := Families[c.Adapter]
		if _, ok := Adapters[c.Adapter]; !ok && !family {
			return fmt.Errorf("unknown adapter %q (one of %s)", c.Adapter, strings.Join(adapterNames(), ", "))
		}
	}
	if c.Module != "" && c.Script != "" {
		return errors.New(`give "module" or "script", not both`)
	}
	for _, d := range []time.Duration{c.Timeouts.Start, c.Timeouts.Setup, c.Timeouts.Iteration, c.Timeouts.Teardown} {
		if d < 0 {
			return errors.New("timeouts must not be negative")
		}
	}
	return nil
}

func adapterNames() []string {
	n := slices.AppendSeq(slices.Collect(maps.Keys(Adapters)), maps.Keys(Families))
	slices.Sort(n)
	return n
}

func init() {
	result.Define(
		result.Info{Name: "startup_ms", Unit: "ms", Better: result.Lower, Doc: "worker process start to its hello reply (interpreter start, framework import)"},
		result.Info{Name: "first_call_ms", Unit: "ms", Better: result.Lower, Doc: "the first call after the model was built, timed in the worker at setup"},
		result.Info{Name: "compilation_time_ms", Unit: "ms", Better: result.Lower, Doc: "JAX: the jit's lower and compile"},
		result.Info{Name: "tokens_per_s", Unit: "tokens/s", Better: result.Higher, Doc: "generation: output tokens of one iteration / its in-worker time"},
	)
	subject.Register(subject.Kind{
		Name:     "worker",
		Config:   func() any { return &Config{} },
		Open:     Open,
		Requires: Requires,
		Files:    map[string]func(string, []byte) ([]subject.Found, error){".py": ParsePythonFile},
		// Counted under callgrind, call by call (counted.go).
		Instructions: true,
	})
}

// Requires lists the Python modules the bundled adapter needs, as `python-module:` requirements,
// so that a scenario whose framework is not installed is skipped before a process is started.
func Requires(cfg any, p subject.Params) []string {
	c, _ := cfg.(*Config)
	if c == nil || len(c.Command) > 0 || c.Module != "" || c.Script != "" {
		return nil
	}
	adapter, err := c.adapterFor(p)
	if err != nil {
		return nil // Open reports it
	}
	var out []string
	if c.Python == "" { // the interpreter the requirements are checked with is the worker's
		for _, m := range c.imports {
			out = append(out, "python-module:"+m)
		}
	}
	for _, m := range Adapters[adapter] {
		out = append(out, "python-module:"+m)
	}
	return out
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// jsonable converts decoded YAML values (maps with any keys, durations) into values
// encoding/json accepts.
func jsonable(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		return jsonableMap(x)
	case map[any]any:
		return jsonableMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case time.Duration:
		return x.String(), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v is not a finite number", x)
		}
	}
	return v, nil
}

// jsonableMap is jsonable on a map, whose keys become strings as fmt prints them.
func jsonableMap[K comparable](x map[K]any) (map[string]any, error) {
	out := make(map[string]any, len(x))
	for k, e := range x {
		c, err := jsonable(e)
		if err != nil {
			return nil, fmt.Errorf("%v: %w", k, err)
		}
		out[fmt.Sprint(k)] = c
	}
	return out, nil
}
