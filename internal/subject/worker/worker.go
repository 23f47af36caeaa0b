// Package worker is the subject that drives a model inside a framework's own process (PyTorch,
// JAX, ONNX Runtime, plain Python functions) through the worker protocol of
// docs/worker-protocol.md: newline-delimited JSON on the process's stdin and stdout, its stderr
// as the log.
//
// One worker process serves one scenario: it is started and set up in Open, keeps the model loaded
// across iterations, and times every iteration itself, so Observation.Values["latency_ms"] is the
// in-worker time and the round trip seen here is recorded by the engine as harness_latency_ms.
// Iterations are asked for in batches (subject.Batcher), so the round trip is paid once per batch.
// A worker that exits, hangs or writes anything but protocol replies fails its scenario with the
// tail of its stderr; a worker that says its framework or variant is unavailable here is reported
// as a skip (Error.SkipReason).
package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/inferbench/inferbench/internal/pyenv"
	"github.com/inferbench/inferbench/internal/workers"
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
	for _, m := range Adapters[adapter] {
		out = append(out, "python-module:"+m)
	}
	return out
}

// Worker is an open worker process, set up for one scenario.
type Worker struct {
	mu       sync.Mutex
	p        *proc
	cfg      Config
	hello    helloReply
	setup    setupReply
	startup  time.Duration
	closed   bool
	closeErr error
	decls    map[string]subject.MetricInfo // units and directions the worker declared ("metrics" in its replies)
}

var (
	_ subject.Subject    = (*Worker)(nil)
	_ subject.Batcher    = (*Worker)(nil)
	_ subject.Processes  = (*Worker)(nil)
	_ subject.Describer  = (*Worker)(nil)
	_ subject.Setup      = (*Worker)(nil)
	_ subject.Sequential = (*Worker)(nil)
	_ subject.Profiler   = (*Worker)(nil)
	_ subject.Declarer   = (*Worker)(nil)
	_ subject.Warner     = (*Worker)(nil)
)

type helloReply struct {
	Protocol   int               `json:"protocol"`
	Worker     string            `json:"worker"`
	Adapter    string            `json:"adapter"`
	Framework  string            `json:"framework"`
	Versions   map[string]string `json:"versions"`
	Device     string            `json:"device"`
	PID        int               `json:"pid"`
	Executable string            `json:"executable"`
}

type setupReply struct {
	LoadTimeMS    *float64           `json:"load_time_ms"`
	CompileTimeMS *float64           `json:"compile_time_ms"`
	Device        string             `json:"device"`
	Info          map[string]any     `json:"info"`
	Values        map[string]float64 `json:"values"`
	// Metrics declare units and directions: {"accuracy": {"unit": "ratio", "better": "higher"}}.
	Metrics map[string]subject.MetricInfo `json:"metrics"`
	// Warnings say what setup could not do as asked; the scenario carries them.
	Warnings []string `json:"warnings"`
}

type runReply struct {
	N            int                   `json:"n"`
	LatencyMS    []float64             `json:"latency_ms"`
	Items        column                `json:"items"`
	TTFTMS       column                `json:"ttft_ms"`
	TokenMS      [][]float64           `json:"token_ms"`
	TokenCount   column                `json:"token_count"`
	InputTokens  column                `json:"input_tokens"`
	OutputTokens column                `json:"output_tokens"`
	IterValues   map[string][]*float64 `json:"iter_values"`
	Values       map[string]float64    `json:"values"`
	ElapsedMS    float64               `json:"elapsed_ms"`
	// Metrics declare units and directions of the figures in iter_values and values.
	Metrics map[string]subject.MetricInfo `json:"metrics"`
}

// Open starts the worker for one scenario, checks its hello and sets it up with the scenario's
// parameters. The process is gone again when Open returns an error.
func Open(ctx context.Context, s subject.Spec) (subject.Subject, error) {
	c, _ := s.Config.(*Config)
	if c == nil {
		return nil, errors.New("worker: missing configuration")
	}
	return OpenConfig(ctx, *c, s, s.Output)
}

// OpenConfig is Open with the configuration given directly and the worker's stderr copied to log
// (when not nil) besides being kept for error messages. The protocol messages are debug records
// of s.Log.
func OpenConfig(ctx context.Context, c Config, s subject.Spec, log io.Writer) (*Worker, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	adapter, err := c.adapterFor(s.Params)
	if err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	c.Adapter = adapter
	argv, env, err := command(c, s)
	if err != nil {
		return nil, err
	}
	label := c.Adapter
	if label == "" {
		label = filepath.Base(argv[0])
	}
	dlog := s.Logger().With("worker", label)
	dlog.Debug("starting worker", "argv", strings.Join(argv, " "), "dir", s.Dir, "pythonpath", envValue(env, "PYTHONPATH"))
	t0 := time.Now()
	p, err := start(argv, s.Dir, env, log, label)
	if err != nil {
		return nil, fmt.Errorf("worker %s: %w", label, err)
	}
	p.log = dlog
	w := &Worker{p: p, cfg: c}
	fail := func(err error) (*Worker, error) {
		p.kill()
		<-p.exited
		return nil, err
	}
	hello := map[string]any{"protocol": Protocol, "adapter": c.Adapter}
	if err := p.call(ctx, "hello", hello, orDefault(c.Timeouts.Start, DefaultStartTimeout), &w.hello); err != nil {
		return fail(err)
	}
	if w.hello.Protocol != Protocol {
		return fail(fmt.Errorf("worker %s speaks protocol %d, this inferbench speaks %d", label, w.hello.Protocol, Protocol))
	}
	w.startup = time.Since(t0)
	params, err := jsonable(map[string]any(s.Params))
	if err != nil {
		return fail(fmt.Errorf("worker %s: params: %w", label, err))
	}
	req := map[string]any{"params": params}
	if err := p.call(ctx, "setup", req, orDefault(c.Timeouts.Setup, DefaultSetupTimeout), &w.setup); err != nil {
		return fail(err)
	}
	return w, nil
}

// program resolves a worker command's program: a path with a slash, or a bare name of a file in
// the definition's folder, is that file (never a program of the same name found on $PATH); any
// other bare name (python3, node) is a program looked up on $PATH.
func program(name, dir string, rel func(string) string) string {
	if strings.Contains(name, "/") {
		return rel(name)
	}
	if dir == "" {
		return name // no definition (a test, the library): a program name
	}
	if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && !fi.IsDir() {
		return rel(name)
	}
	return name
}

// command returns the argv and environment of the worker process.
func command(c Config, s subject.Spec) (argv, env []string, err error) {
	env = s.Env
	if env == nil {
		env = os.Environ()
	}
	env = append([]string(nil), env...)
	// Paths are made absolute: the process runs in s.Dir, where a path relative to the current
	// folder would be looked up again.
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		if abs, err := filepath.Abs(filepath.Join(s.Dir, p)); err == nil {
			return abs
		}
		return filepath.Join(s.Dir, p)
	}
	if len(c.Command) > 0 {
		argv = append([]string(nil), c.Command...)
		argv[0] = program(argv[0], s.Dir, rel)
	} else {
		py := c.Python
		if py == "" {
			py = pyenv.FindIn(env).Path // the interpreter requirements are checked with
		}
		switch {
		case c.Script != "":
			argv = []string{py, rel(c.Script)}
		case c.Module != "":
			argv = []string{py, "-m", c.Module}
		default:
			argv = []string{py, "-m", workers.Package}
		}
		path := rel(c.Path)
		if path == "" {
			if path, err = workers.PythonPath(""); err != nil {
				return nil, nil, err
			}
		}
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		cwd, _ := os.Getwd()
		if root := pyenv.ProjectRoot(s.Dir, cwd); root != "" && s.Dir != "" {
			path += string(os.PathListSeparator) + root
		}
		if old := lookup(env, "PYTHONPATH"); old != "" {
			path += string(os.PathListSeparator) + old
		}
		env = setenv(env, "PYTHONPATH", path)
		env = setenv(env, "PYTHONUNBUFFERED", "1")
		env = setenv(env, "PYTHONFAULTHANDLER", "1")
		env = setenv(env, "PYTHONDONTWRITEBYTECODE", "1")
	}
	keys := slices.Sorted(maps.Keys(c.Env))
	for _, k := range keys {
		env = setenv(env, k, c.Env[k])
	}
	return argv, env, nil
}

// Do runs one iteration.
func (w *Worker) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	obs, err := w.DoBatch(ctx, r, 1)
	if len(obs) == 0 {
		return subject.Observation{}, err
	}
	return obs[0], err
}

// DoBatch runs n iterations in one round trip ("warmup" when r.Warmup, else "run") and returns
// one observation per iteration. Each observation's Values["latency_ms"] is the worker's own
// timing; its Start and End lay the iterations end to end over the round trip, each carrying an
// equal share of the protocol's overhead, so End−Start is the harness's view of the iteration.
// FirstToken and Tokens are the worker's offsets from the iteration's start.
func (w *Worker) DoBatch(ctx context.Context, r subject.Request, n int) ([]subject.Observation, error) {
	if n < 1 {
		n = 1
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, errors.New("worker: call after Close")
	}
	op := "run"
	if r.Warmup {
		op = "warmup"
	}
	var timeout time.Duration
	if w.cfg.Timeouts.Iteration > 0 {
		timeout = w.cfg.Timeouts.Iteration * time.Duration(n)
	}
	var rr runReply
	t0 := time.Now()
	err := w.p.call(ctx, op, map[string]any{"n": n}, timeout, &rr)
	t1 := time.Now()
	if err != nil {
		return nil, err
	}
	if len(rr.LatencyMS) != n {
		return nil, w.p.fail(op, fmt.Sprintf("answered %d samples for %d iterations", len(rr.LatencyMS), n))
	}
	if err := rr.check(); err != nil {
		return nil, fmt.Errorf("worker %s: %s reply: %w", w.p.label, op, err)
	}
	w.declare(rr.Metrics) // w.mu is held
	return observations(&rr, n, t0, t1), nil
}

// check refuses a reply with a time that is negative or beyond a year, or a count that is
// negative or beyond any real one: the worker measured nothing that could be summarised.
func (rr *runReply) check() error {
	times := func(name string, i int, v float64) error {
		if v < 0 || v > result.MaxMillis {
			return fmt.Errorf("%s[%d] = %v is not a valid time in ms", name, i, v)
		}
		return nil
	}
	counts := func(name string, c column, limit float64) error {
		for i := range max(1, len(c.list)) {
			if v, ok := c.at(i); ok && (v < 0 || v > limit) {
				return fmt.Errorf("%s[%d] = %v is not a valid count", name, i, v)
			}
		}
		return nil
	}
	for i, v := range rr.LatencyMS {
		if err := times("latency_ms", i, v); err != nil {
			return err
		}
	}
	for i := range max(1, len(rr.TTFTMS.list)) {
		if v, ok := rr.TTFTMS.at(i); ok {
			if err := times("ttft_ms", i, v); err != nil {
				return err
			}
		}
	}
	for i, ts := range rr.TokenMS {
		for _, v := range ts {
			if err := times("token_ms", i, v); err != nil {
				return err
			}
		}
	}
	for _, c := range []struct {
		name  string
		col   column
		limit float64
	}{{"items", rr.Items, 1e9}, {"token_count", rr.TokenCount, result.MaxTokens}, {"input_tokens", rr.InputTokens, result.MaxTokens}, {"output_tokens", rr.OutputTokens, result.MaxTokens}} {
		if err := counts(c.name, c.col, c.limit); err != nil {
			return err
		}
	}
	return nil
}

// observations lays n worker-timed iterations over the round trip [t0, t1].
func observations(rr *runReply, n int, t0, t1 time.Time) []subject.Observation {
	var sum time.Duration
	for _, v := range rr.LatencyMS {
		sum += msDuration(v)
	}
	over := (t1.Sub(t0) - sum) / time.Duration(n)
	if over < 0 {
		over = 0
	}
	obs := make([]subject.Observation, n)
	cur := t0
	for i := range obs {
		o := &obs[i]
		lat := rr.LatencyMS[i]
		o.Start = cur
		o.End = cur.Add(msDuration(lat) + over)
		cur = o.End
		o.Values = make(map[string]float64, 1+len(rr.Values)+len(rr.IterValues))
		for k, v := range rr.Values {
			o.Values[k] = v
		}
		for k, col := range rr.IterValues {
			if i < len(col) && col[i] != nil {
				o.Values[k] = *col[i]
			}
		}
		o.Values["latency_ms"] = lat
		if v, ok := rr.Items.at(i); ok {
			o.Items = int(v)
		}
		if v, ok := rr.TTFTMS.at(i); ok {
			o.FirstToken = o.Start.Add(msDuration(v))
		}
		if i < len(rr.TokenMS) && len(rr.TokenMS[i]) > 0 {
			per := 1
			if v, ok := rr.TokenCount.at(i); ok && v >= 1 {
				per = int(v)
			}
			o.Tokens = make([]subject.TokenEvent, len(rr.TokenMS[i]))
			for j, t := range rr.TokenMS[i] {
				o.Tokens[j] = subject.TokenEvent{At: o.Start.Add(msDuration(t)), Tokens: per}
			}
			if o.FirstToken.IsZero() {
				o.FirstToken = o.Tokens[0].At
			}
		}
		if v, ok := rr.OutputTokens.at(i); ok {
			o.OutputTokens = int(v)
		}
		if v, ok := rr.InputTokens.at(i); ok {
			o.InputTokens = int(v)
		}
	}
	return obs
}

// Close tears the worker down and waits for its process to exit.
func (w *Worker) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.closeErr
	}
	w.closed = true
	w.closeErr = w.p.close(orDefault(w.cfg.Timeouts.Teardown, DefaultTeardownTimeout))
	return w.closeErr
}

// PIDs returns the worker's process id while it runs.
func (w *Worker) PIDs() []int {
	select {
	case <-w.p.exited:
		return nil
	default:
	}
	return []int{w.p.cmd.Process.Pid}
}

// Profile implements subject.Profiler: the worker runs n calls under the adapter's profiler
// (torch.profiler's Chrome trace for torch adapters, cProfile for the others) and writes the
// files under dir.
func (w *Worker) Profile(ctx context.Context, dir string, n int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, errors.New("worker: profile after Close")
	}
	var timeout time.Duration
	if w.cfg.Timeouts.Iteration > 0 {
		timeout = w.cfg.Timeouts.Iteration * time.Duration(n+1)
	}
	var reply struct {
		Files []string `json:"files"`
	}
	if err := w.p.call(ctx, "profile", map[string]any{"n": n, "dir": abs}, timeout, &reply); err != nil {
		return nil, err
	}
	return reply.Files, nil
}

// OneAtATime implements subject.Sequential: one worker process runs one call at a time.
func (w *Worker) OneAtATime() string {
	return "one worker process runs one call at a time"
}

// Describe reports the worker's framework, versions, device and setup details.
func (w *Worker) Describe() map[string]any {
	d := map[string]any{
		"adapter":   w.hello.Adapter,
		"framework": w.hello.Framework,
		"worker":    w.hello.Worker,
		"protocol":  w.hello.Protocol,
		"device":    w.hello.Device,
		"pid":       w.hello.PID,
	}
	if w.setup.Device != "" {
		d["device"] = w.setup.Device
	}
	if w.hello.Executable != "" {
		d["python"] = w.hello.Executable
	}
	if len(w.hello.Versions) > 0 {
		d["versions"] = w.hello.Versions
	}
	if len(w.setup.Info) > 0 {
		d["setup"] = w.setup.Info
	}
	return d
}

// Warnings returns the warnings of the worker's setup reply, prefixed with the adapter.
func (w *Worker) Warnings() []string {
	out := make([]string, 0, len(w.setup.Warnings))
	for _, m := range w.setup.Warnings {
		out = append(out, w.hello.Adapter+": "+m)
	}
	return out
}

// declare keeps declarations of a run reply; the caller holds w.mu.
func (w *Worker) declare(d map[string]subject.MetricInfo) {
	if len(d) == 0 {
		return
	}
	if w.decls == nil {
		w.decls = map[string]subject.MetricInfo{}
	}
	maps.Copy(w.decls, d)
}

// Declared returns the units and directions the worker declared in its setup and run replies
// (the latest wins).
func (w *Worker) Declared() map[string]subject.MetricInfo {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := maps.Clone(w.setup.Metrics)
	if out == nil {
		out = map[string]subject.MetricInfo{}
	}
	maps.Copy(out, w.decls)
	return out
}

// SetupValues reports what setup measured: load_time_ms (building the model), compile_time_ms
// (when the worker reports it), startup_ms (process start to hello), and the worker's own setup
// figures such as first_call_ms or compilation_time_ms.
func (w *Worker) SetupValues() map[string]float64 {
	out := map[string]float64{"startup_ms": float64(w.startup) / 1e6}
	for k, v := range w.setup.Values {
		out[k] = v
	}
	if w.setup.LoadTimeMS != nil {
		out["load_time_ms"] = *w.setup.LoadTimeMS
	}
	if w.setup.CompileTimeMS != nil {
		out["compile_time_ms"] = *w.setup.CompileTimeMS
	}
	return out
}

// column is a reply column: one number for every iteration, or a list with nulls for gaps.
type column struct {
	one  *float64
	list []*float64
}

func (c *column) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	switch {
	case s == "null":
		return nil
	case strings.HasPrefix(s, "["):
		return json.Unmarshal(b, &c.list)
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	c.one = &v
	return nil
}

func (c column) at(i int) (float64, bool) {
	if c.one != nil {
		return *c.one, true
	}
	if i < len(c.list) && c.list[i] != nil {
		return *c.list[i], true
	}
	return 0, false
}

func msDuration(ms float64) time.Duration {
	if math.IsNaN(ms) || ms < 0 {
		return 0
	}
	return time.Duration(ms * 1e6)
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func lookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

func setenv(env []string, key, val string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+val)
}

// jsonable converts decoded YAML values (maps with any keys, durations) into values
// encoding/json accepts.
func jsonable(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := jsonable(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = c
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := jsonable(e)
			if err != nil {
				return nil, fmt.Errorf("%v: %w", k, err)
			}
			out[fmt.Sprint(k)] = c
		}
		return out, nil
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

// envValue returns the value of name in env (KEY=VALUE entries; the last wins), or "".
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}
