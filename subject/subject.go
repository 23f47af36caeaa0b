// Package subject defines what a benchmark drives: a Subject performs one call (an inference, a
// request, a command) per Do and reports what it saw as an Observation. Each kind of subject lives in
// its own subpackage (mock, exec, gofunc, worker, openai) and registers itself with Register.
package subject

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/inferbench/inferbench/internal/base/registry"
)

// Subject is the system under test, opened once per scenario.
type Subject interface {
	// Do performs one call. A non-nil error is a failed iteration; the Observation is still used
	// for its timestamps where they are set.
	Do(ctx context.Context, r Request) (Observation, error)
	// Close releases the subject (a process, a connection pool).
	Close() error
}

// Request describes one call. Drivers fill it; subjects may ignore it.
type Request struct {
	Index     int       // 0-based call number within the scenario, warm-up included
	Warmup    bool      // the call is a warm-up call: its observation is not measured
	Scheduled time.Time // intended send time in open-loop drivers; zero otherwise
}

// Observation is what one call produced. Times are wall-clock readings with a monotonic component.
type Observation struct {
	Scheduled  time.Time    // intended send time (open loop); zero means "same as Start"
	Start      time.Time    // when the call was sent
	FirstToken time.Time    // first content token (streaming generation); zero when not streaming
	End        time.Time    // when the call completed
	Tokens     []TokenEvent // streamed content events in arrival order

	InputTokens  int // prompt tokens, when known
	OutputTokens int // generated tokens: the server's usage when reported, else counted events
	// TokensCounted is true when OutputTokens was counted from content events because the
	// subject had no authoritative usage figure.
	TokensCounted bool
	// Streamed is true for a streamed generation: FirstToken is then zero only when the stream
	// ended with no content at all.
	Streamed bool
	Items    int // batch items processed by this call (throughput = items / time); 0 means 1
	// CPU is the CPU time of the call as the subject measured it (a thread's or a process's
	// clock), per call as Values["latency_ms"] is; 0 when not measured. It is recorded as cpu_ms
	// unless Values holds a cpu_ms of the subject's own. A field, not a value, so that a call
	// reporting only it allocates nothing.
	CPU time.Duration

	// Values holds figures the subject measured itself, by metric name: "latency_ms" when the
	// subject timed the call internally (CUDA events, an in-worker clock), "memory_mb" (peak), ...
	Values map[string]float64
}

// TokenEvent is one streamed content event: when it arrived and how many tokens it carried.
type TokenEvent struct {
	At     time.Time
	Tokens int
}

// Params are the scenario's parameters after matrix expansion and --set overrides.
type Params map[string]any

// String returns the parameter as a string, or def when it is absent.
func (p Params) String(key, def string) string {
	v, ok := p[key]
	if !ok || v == nil {
		return def
	}
	return fmt.Sprint(v)
}

// Int returns the parameter as an int, or def when it is absent or not a number.
func (p Params) Int(key string, def int) int {
	if v, ok := p[key].(int); ok {
		return v
	}
	return int(p.Float(key, float64(def)))
}

// Float returns the parameter as a float64, or def when it is absent or not a number.
func (p Params) Float(key string, def float64) float64 {
	switch v := p[key].(type) {
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case uint64:
		return float64(v)
	case float64:
		return v
	}
	return def
}

// Bool returns the parameter as a bool, or def when it is absent.
func (p Params) Bool(key string, def bool) bool {
	if v, ok := p[key].(bool); ok {
		return v
	}
	return def
}

// Spec is everything a kind needs to open a subject for one scenario.
type Spec struct {
	Benchmark string // benchmark name, for error messages
	Scenario  string // scenario name
	Dir       string // directory of the definition file; relative paths resolve against it
	Config    any    // the kind's decoded configuration (the value Kind.Config returned)
	Params    Params
	Env       []string // environment passed to processes the subject starts (nil: inherit)
	// Output receives what the processes the subject starts write on stdout and stderr (a
	// command's output, a worker's log and its benchmark's print() and logging), for the
	// scenario's log in the run folder; nil discards it. It is safe for concurrent use and
	// redacts what it keeps.
	Output io.Writer
	// Log is the run's log, for the subject's debug records (a worker's protocol messages); nil
	// logs nothing.
	Log *slog.Logger
	// Measure is MeasureInstructions when the scenario is counted rather than timed: the kind
	// (Kind.Instructions) runs it under valgrind's callgrind and reports each call's
	// "instructions" and "est_cycles" in Observation.Values. Empty: timed.
	Measure string
	// ProfileDir is where a counted subject keeps its callgrind files (the run folder's
	// profiles/SCENARIO/); empty keeps none.
	ProfileDir string
	// Redact masks the run's secrets in text a subject writes into the run folder itself (the
	// command line at the top of each callgrind file it keeps); nil keeps the text as it is.
	Redact func(string) string
	// Timeout is the run's deadline of one call (load.timeout, --timeout); zero when the run
	// gives none. A kind bounds the requests it sends while opening (a server's probes) by it,
	// not by a fixed time of its own.
	Timeout time.Duration
}

// MeasureInstructions is Spec.Measure of a counted scenario.
const MeasureInstructions = "instructions"

// Logger returns s.Log, or a logger that discards everything when it is nil.
func (s Spec) Logger() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// Kind is one kind of subject.
type Kind struct {
	Name string
	// Config returns a pointer to a fresh configuration struct. The definition's `subject:` block
	// (less its `kind` key) is decoded into it strictly. Nil means the kind takes no configuration.
	Config func() any
	// Open opens a subject for one scenario.
	Open func(ctx context.Context, s Spec) (Subject, error)
	// Requires optionally lists needs (as in a definition's `requires:`) implied by the config,
	// e.g. a worker adapter's Python module.
	Requires func(cfg any, p Params) []string
	// Files optionally finds benchmarks of this kind in source files under benches/ by their
	// extension (".py": a Python file's benchmark functions), without running them. A file
	// without benchmarks yields none and no error (it may be a helper module).
	Files map[string]func(path string, data []byte) ([]Found, error)
	// InProcess says the subject's calls run in inferbench's own process (a Go function): they
	// share its garbage collector, which the engine then leaves as it is. For every other kind
	// the engine trades memory for fewer collections while it drives the load
	// (32 MiB of heap headroom between collections while it runs).
	InProcess bool
	// Instructions says the kind can count instead of time (Spec.Measure); the engine refuses
	// instruction mode for the other kinds.
	Instructions bool
}

// Found is a benchmark a kind found in a source file (Kind.Files): suite makes it a benchmark of
// the kind, defined at the file's line.
type Found struct {
	Name        string
	Description string
	Model       string
	Tags        []string
	Line        int
	Config      any // the kind's configuration, as Kind.Config returns it
	Params      Params
	// Accepts are the parameters the benchmark reads besides Params (a Python function's
	// arguments): --set may give them.
	Accepts []string
}

// FileKind returns the kind that finds benchmarks in files with extension ext, and its scanner.
func FileKind(ext string) (kind string, scan func(path string, data []byte) ([]Found, error), ok bool) {
	for _, name := range kinds.Names() {
		if k, _ := kinds.Get(name); k.Files[ext] != nil {
			return name, k.Files[ext], true
		}
	}
	return "", nil, false
}

// kinds are the registered kinds (internal/base/registry, as gofunc's functions and the monitor's
// sources are).
var kinds = registry.New[Kind]("subject: kind")

// Register makes a kind available to definitions. It panics on a duplicate name.
func Register(k Kind) { kinds.Add(k.Name, k) }

// Lookup returns the kind registered under name.
func Lookup(name string) (Kind, bool) { return kinds.Get(name) }

// Kinds returns the registered kind names, sorted.
func Kinds() []string { return kinds.Names() }

// Batcher is an optional ability: a subject that runs n calls in one round trip (a worker process)
// and returns one observation per call, timed on its side.
type Batcher interface {
	DoBatch(ctx context.Context, r Request, n int) ([]Observation, error)
}

// Processes is an optional ability: a subject backed by processes reports their ids so that
// monitors can sample the process tree.
type Processes interface {
	PIDs() []int
}

// Describer is an optional ability: a subject that can describe its environment (framework
// versions, device) for the results.
type Describer interface {
	Describe() map[string]any
}

// Profiler is an optional ability: a subject that can run n more calls under its ecosystem's
// profiler (pprof for Go functions, cProfile for Python functions, torch.profiler for torch
// models), writing the profiles under dir. It returns the files written. It runs apart from the
// measured iterations: its calls are never measured.
type Profiler interface {
	Profile(ctx context.Context, dir string, n int) ([]string, error)
}

// Sequential is an optional ability: a subject that makes one call at a time whatever the load
// asks (one worker process). OneAtATime says why, for the warning a concurrent load gets. Its
// observations time each call from when its turn comes: the wait for the turn is in no figure.
type Sequential interface {
	OneAtATime() string
}

// Setup is an optional ability: figures measured while opening the subject, such as
// "load_time_ms" or "compile_time_ms", reported once per scenario.
type Setup interface {
	SetupValues() map[string]float64
}

// Warner is an optional ability: a subject that learned, while opening, something its
// scenario's results should carry as warnings, such as a worker's setup that could not do all a
// variant asks (no layer kernelized, and why).
type Warner interface {
	Warnings() []string
}

// MetricInfo declares a metric's unit and which way it is better, where the metric is produced:
// a definition's `metrics:` block, a worker's reply, a command's JSON line.
type MetricInfo struct {
	Unit string `yaml:"unit" json:"unit,omitempty"`
	// Better is "higher" or "lower" (result.ParseDirection reads it).
	Better string `yaml:"better" json:"better,omitempty"`
}

// Counter is the ability of a subject opened in instruction mode (Spec.Measure): Identity is
// what its counts depend on besides the code (valgrind's version, the CPU, the interpreter), and
// Kept the callgrind files it kept under Spec.ProfileDir.
type Counter interface {
	Identity() map[string]string
	Kept() []string
}

// Declarer is an optional ability: a subject that learned its metrics' units and directions
// from what it ran (a worker's reply, an exec command's JSON line). The engine records them on
// the scenario's metrics; a definition's `metrics:` block overrides them.
type Declarer interface {
	Declared() map[string]MetricInfo
}
