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
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/inferbench/inferbench/subject"
)

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
	count    *counter                      // instruction mode (counted.go); nil when timed
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
	_ subject.Counter    = (*Worker)(nil)
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
	var count *counter
	opened := false
	if s.Measure == subject.MeasureInstructions {
		if count, argv, env, err = countedCommand(ctx, s, &c, argv, env); err != nil {
			return nil, err
		}
		defer func() {
			if !opened {
				os.RemoveAll(count.tmp) // callgrind's folder, of a worker that did not open
			}
		}()
	}
	label := c.Adapter
	if label == "" {
		label = filepath.Base(argv[0])
	}
	dlog := s.Logger().With("worker", label)
	dlog.Debug("starting worker", "argv", strings.Join(argv, " "), "dir", s.Dir, "pythonpath", pythonpath(env))
	t0 := time.Now()
	p, err := start(argv, s.Dir, env, log, label)
	if err != nil {
		return nil, fmt.Errorf("worker %s: %w", label, err)
	}
	p.log = dlog
	w := &Worker{p: p, cfg: c, count: count, decls: map[string]subject.MetricInfo{}}
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
	opened = true
	return w, nil
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
	if w.count != nil {
		os.RemoveAll(w.count.tmp)
	}
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
