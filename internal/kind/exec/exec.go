// Package exec is the subject that runs a command once per iteration. The command runs without a
// shell (argv as given) unless `shell: true`; a non-zero exit is a failed iteration carrying the
// tail of stderr; with `metrics: json` the last line of stdout is read as a JSON object of figures
// ("latency_ms" there is the command's own timing of its work, and replaces the round trip). A
// figure may be an object declaring its unit and direction: {"throughput": {"value": 1000,
// "unit": "items/s", "better": "higher"}}.
package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/inferbench/inferbench/internal/base/procgroup"
	"github.com/inferbench/inferbench/internal/base/tail"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// Config is the `subject:` block of an exec definition.
type Config struct {
	// Command is the argv (a list), or one string split like a shell would (without running one).
	// "{name}" in an argument is replaced by the scenario parameter name.
	Command any `yaml:"command"`
	// Shell runs Command (a string) through /bin/sh -c.
	Shell bool `yaml:"shell"`
	// Dir is the working directory, relative to the definition (default: the definition's).
	Dir string `yaml:"dir"`
	// Env adds environment variables.
	Env map[string]string `yaml:"env"`
	// Metrics "json" reads the last line of stdout as a JSON object of metric values.
	Metrics string `yaml:"metrics"`
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	switch v := c.Command.(type) {
	case string:
		if strings.TrimSpace(v) == "" {
			return errors.New("command is empty")
		}
	case []any:
		if len(v) == 0 {
			return errors.New("command is an empty list")
		}
	case nil:
		return errors.New(`missing "command"`)
	default:
		return fmt.Errorf("command must be a string or a list, not %T", v)
	}
	if c.Metrics != "" && c.Metrics != "json" && c.Metrics != "none" {
		return fmt.Errorf("metrics %q: want json or none", c.Metrics)
	}
	return nil
}

func init() {
	subject.Register(subject.Kind{
		Name:         "exec",
		Config:       func() any { return &Config{} },
		Open:         Open,
		Instructions: true,
	})
}

// Command is an open exec subject.
type Command struct {
	argv    []string
	dir     string
	env     []string
	metrics bool
	setID   bool      // argv[0] is a set-user-ID or set-group-ID program: not traced
	output  io.Writer // the scenario's output log; nil discards

	mu     sync.Mutex
	decls  map[string]subject.MetricInfo // declared in the JSON lines, the latest wins
	traced float64                       // the largest peak RSS of the traced calls, bytes

	count *counter // instruction mode (counted.go); nil when timed
}

var (
	_ subject.Subject  = (*Command)(nil)
	_ subject.Declarer = (*Command)(nil)
	_ subject.Counter  = (*Command)(nil)
)

func (c *Command) declare(d map[string]subject.MetricInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	maps.Copy(c.decls, d)
}

// Declared returns the units and directions the command's JSON lines declared.
func (c *Command) Declared() map[string]subject.MetricInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.decls)
}

// Open prepares the command for one scenario.
func Open(ctx context.Context, s subject.Spec) (subject.Subject, error) {
	c, _ := s.Config.(*Config)
	if c == nil {
		return nil, errors.New(`exec: missing configuration`)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	argv, err := BuildArgv(c.Command, c.Shell, s.Params)
	if err != nil {
		return nil, err
	}
	if !c.Shell {
		if _, err := osexec.LookPath(argv[0]); err != nil && !strings.Contains(argv[0], "/") {
			return nil, fmt.Errorf("command %q not found on PATH", argv[0])
		}
	}
	dir := s.Dir
	if c.Dir != "" {
		dir = c.Dir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(s.Dir, dir)
		}
	}
	env := s.Env
	if env == nil {
		env = os.Environ()
	}
	env = append([]string(nil), env...)
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		env = append(env, k+"="+substitute(c.Env[k], s.Params))
	}
	for k, v := range s.Params {
		env = append(env, "INFERBENCH_PARAM_"+strings.ToUpper(k)+"="+fmt.Sprint(v))
	}
	s.Logger().Debug("exec command", "argv", strings.Join(argv, " "), "dir", dir, "metrics", c.Metrics)
	// A traced set-user-ID program runs without its privileges (the kernel's rule): such a
	// command runs untraced, and its peak RSS comes from its rusage alone (peak_linux.go).
	setID := false
	if path, err := osexec.LookPath(argv[0]); err == nil {
		if fi, err := os.Stat(path); err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			setID = true
		}
	}
	cmd := &Command{argv: argv, dir: dir, env: env, metrics: c.Metrics == "json", setID: setID, output: s.Output, decls: map[string]subject.MetricInfo{}}
	if s.Measure == subject.MeasureInstructions {
		if cmd.count, err = newCounter(ctx, s.ProfileDir, s.Redact); err != nil {
			return nil, err
		}
	}
	return cmd, nil
}

// Do runs the command once. The iteration ends when the command exits: a process it left in the
// background that still holds its stdout or stderr does not hold the iteration (what the command
// wrote before it exited is read; what the background process writes later is not). On Linux the
// observation carries the command's own peak RSS (peak_rss_mb; see peak_linux.go): the largest
// of the traced calls (the warm-up ones) and its own where its rusage tells it.
func (c *Command) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	stderr := &tail.Buffer{Max: 2048}
	stdout := &tail.Buffer{Max: 8192} // its last line: the metrics of `metrics: json`
	if c.output != nil {
		// Whole lines, so that the output of calls running side by side does not interleave
		// within a line.
		outLines, errLines := &lineWriter{w: c.output}, &lineWriter{w: c.output}
		defer outLines.flush()
		defer errLines.flush()
		stdout.W, stderr.W = outLines, errLines
	}
	// The pipes are inferbench's own, not os/exec's: os/exec waits for its pipes to close, which
	// a background process holding them delays past the command's exit (the iteration then failed
	// with "WaitDelay expired").
	outPipe, err := newOutPipe(stdout)
	if err != nil {
		return subject.Observation{}, fmt.Errorf("%s: %w", c.argv[0], err)
	}
	errPipe, err := newOutPipe(stderr)
	if err != nil {
		outPipe.close()
		return subject.Observation{}, fmt.Errorf("%s: %w", c.argv[0], err)
	}
	argv, env := c.argv, c.env
	var counted string // instruction mode: the folder callgrind writes to
	if c.count != nil {
		if argv, env, counted, err = c.count.prepare(argv, env); err != nil {
			outPipe.close()
			errPipe.close()
			return subject.Observation{}, err
		}
	}
	build := func() *osexec.Cmd {
		cmd := osexec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = c.dir
		cmd.Env = env
		setProcessGroup(cmd)
		cmd.WaitDelay = time.Second
		cmd.Stdout = outPipe.w
		cmd.Stderr = errPipe.w
		return cmd
	}
	var o subject.Observation
	var peak float64
	o.Start = time.Now()
	// Tracing costs a measured call two stops of the command, each waiting for inferbench's
	// thread: on the loaded 2-core machine that doubled the run-to-run noise of `sleep 0.01`
	// (noise thresholds 25-28% traced against 10-12% untraced). So only the warm-up calls are
	// traced, and the first call when there is no warm-up; every call reports the largest
	// peak of those, raised by its own rusage where that is surely the command's.
	// A command under valgrind is not traced: its peak would be valgrind's.
	trace := !c.setID && (r.Warmup || r.Index == 0) && c.count == nil
	p, err := start(build, trace)
	outPipe.started()
	errPipe.started()
	if err == nil {
		done := procgroup.Add(p.cmd.Process.Pid) // the second Ctrl-C kills it (inferbench.Run)
		peak, err = p.wait()
		done()
	}
	o.End = time.Now()
	outPipe.close()
	errPipe.close()
	if counted != "" {
		pid := 0
		if p != nil {
			pid = p.cmd.Process.Pid
		}
		if err != nil {
			os.RemoveAll(counted)
		} else if o.Values, err = c.count.collect(counted, pid, !r.Warmup); err != nil {
			return o, fmt.Errorf("%s: %w", c.argv[0], err)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return o, fmt.Errorf("%s: %w", strings.Join(c.argv, " "), ctx.Err())
		}
		return o, &RunError{Argv: c.argv, Err: err, Stderr: strings.TrimSpace(stderr.String())}
	}
	if c.metrics {
		if err := c.stdoutMetrics(&o, stdout.String()); err != nil {
			return o, err
		}
	}
	c.addUsage(&o, peak, trace, p)
	return o, nil
}

// stdoutMetrics reads the metrics of `metrics: json` from the last line of stdout into o, beside
// instruction mode's counts, with its items count as o.Items, and declares their units.
func (c *Command) stdoutMetrics(o *subject.Observation, stdout string) error {
	vals, decls, err := lastLineJSON([]byte(stdout))
	if err != nil {
		return fmt.Errorf("%s: metrics from stdout: %w", c.argv[0], err)
	}
	c.declare(decls)
	for k, v := range o.Values { // instruction mode's counts
		vals[k] = v
	}
	o.Values = vals
	if items, ok := vals["items"]; ok {
		if items < 0 || items > 1e9 || items != math.Trunc(items) {
			return fmt.Errorf("%s: metrics from stdout: items = %v is not a count of items", c.argv[0], items)
		}
		o.Items = int(items)
		delete(vals, "items")
	}
	return nil
}

// addUsage adds to o the command's peak RSS (the largest of the traced calls' and its own
// peak) and its CPU time, unless the command reported them itself; trace says this call was
// traced.
func (c *Command) addUsage(o *subject.Observation, peak float64, trace bool, p *started) {
	c.mu.Lock()
	if trace {
		c.traced = max(c.traced, peak)
	}
	peak = max(peak, c.traced)
	c.mu.Unlock()
	if _, own := o.Values[PeakRSS]; peak > 0 && !own && c.count == nil {
		if o.Values == nil {
			o.Values = map[string]float64{}
		}
		o.Values[PeakRSS] = peak / (1 << 20)
	}
	if _, own := o.Values[CPUTime]; !own && p.cmd.ProcessState != nil {
		if o.Values == nil {
			o.Values = map[string]float64{}
		}
		o.Values[CPUTime] = cpuMS(p.cmd.ProcessState)
	}
}

// CPUTime is the metric of a command's own CPU time (ms, user + system, from its rusage: its
// reaped children's included), reported with every iteration beside its wall time. Unlike the
// wall time it leaves out the waits for a core, which a loaded machine lengthens.
const CPUTime = "cpu_ms"

// cpuMS is the user and system time of a reaped process, in milliseconds.
func cpuMS(ps *os.ProcessState) float64 {
	return float64(ps.UserTime()+ps.SystemTime()) / 1e6
}

// PeakRSS is the metric of a command's own peak resident memory (MB), reported with every
// iteration where the platform measures it; the engine keeps the largest.
const PeakRSS = "peak_rss_mb"

// outPipe carries a command's stdout or stderr to a writer.
type outPipe struct {
	r, w *os.File
	dst  io.Writer
	done chan struct{}
}

func newOutPipe(dst io.Writer) (*outPipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p := &outPipe{r: r, w: w, dst: dst, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		io.Copy(dst, r) //nolint:errcheck // ends at EOF, or at the deadline close sets
	}()
	return p, nil
}

// started closes inferbench's copy of the write end, once the command holds its own.
func (p *outPipe) started() { p.w.Close() }

// close ends the copy once the command has exited: at EOF, or, when a background process still
// holds the write end, as soon as what is already in the pipe has been read.
func (p *outPipe) close() {
	p.w.Close()
	if err := p.r.SetReadDeadline(time.Now()); err != nil {
		// A pipe without deadlines (Windows): EOF, or a second at most.
		select {
		case <-p.done:
		case <-time.After(time.Second):
		}
		p.r.Close()
		return
	}
	<-p.done
	// The copy may have stopped at the deadline with bytes still in the pipe: read them without
	// waiting for more.
	p.r.SetReadDeadline(time.Time{}) //nolint:errcheck // it was just set
	if rc, err := p.r.SyscallConn(); err == nil {
		buf := make([]byte, 32<<10)
		rc.Read(func(fd uintptr) bool { //nolint:errcheck // what could be read is read
			for {
				n := readNow(fd, buf)
				if n <= 0 {
					return true
				}
				p.dst.Write(buf[:n]) //nolint:errcheck // buffers and the best-effort log
			}
		})
	}
	p.r.Close()
}

// RunError is a command that failed; it carries the tail of its stderr.
type RunError struct {
	Argv   []string
	Err    error
	Stderr string
}

func (e *RunError) Error() string {
	msg := fmt.Sprintf("%s: %v", strings.Join(e.Argv, " "), e.Err)
	if e.Stderr != "" {
		msg += "; stderr: " + e.Stderr
	}
	return msg
}

func (e *RunError) Unwrap() error { return e.Err }

// Kind groups failures by exit status for counting.
func (e *RunError) Kind() string {
	var ee *osexec.ExitError
	if errors.As(e.Err, &ee) {
		return fmt.Sprintf("exit %d", ee.ExitCode())
	}
	return "start"
}

func lastLineJSON(out []byte) (map[string]float64, map[string]subject.MetricInfo, error) {
	out = bytes.TrimRight(out, "\r\n\t ")
	if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	if len(out) == 0 {
		return nil, nil, errors.New("stdout is empty; want a JSON object on the last line")
	}
	var raw map[string]any
	if err := json.Unmarshal(out, &raw); err != nil || raw == nil {
		if err == nil {
			err = errors.New("null") // decodes into no map, without an error
		}
		return nil, nil, fmt.Errorf("last line %q is not a JSON object: %v", truncate(string(out), 80), err)
	}
	vals := map[string]float64{}
	var decls map[string]subject.MetricInfo
	for k, v := range raw {
		if k == "" {
			return nil, nil, errors.New(`a metric with an empty name ("": ...)`)
		}
		switch v := v.(type) {
		case float64:
			vals[k] = v
		case map[string]any:
			// {"value": 1000, "unit": "items/s", "better": "higher"}: a figure with its
			// declaration.
			f, ok := v["value"].(float64)
			if !ok {
				return nil, nil, fmt.Errorf("%q: an object must have a numeric \"value\" (with \"unit\" and \"better\": higher or lower)", k)
			}
			vals[k] = f
			var d subject.MetricInfo
			d.Unit, _ = v["unit"].(string)
			d.Better, _ = v["better"].(string)
			if d.Better != "" {
				if _, err := result.ParseDirection(d.Better); err != nil {
					return nil, nil, fmt.Errorf("%q: %w", k, err)
				}
			}
			if decls == nil {
				decls = map[string]subject.MetricInfo{}
			}
			decls[k] = d
		}
	}
	return vals, decls, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Close does nothing: each iteration's process has already exited.
func (c *Command) Close() error { return nil }

// lineWriter passes whole lines on to w, one Write per line or run of lines; flush passes on an
// unfinished last line.
type lineWriter struct {
	w   io.Writer
	buf []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	if i := bytes.LastIndexByte(l.buf, '\n'); i >= 0 {
		l.w.Write(l.buf[:i+1]) //nolint:errcheck // the log is best effort
		l.buf = append(l.buf[:0], l.buf[i+1:]...)
	}
	if len(l.buf) > 64<<10 { // a long line without end: pass it on as it is
		l.flush()
	}
	return len(p), nil
}

func (l *lineWriter) flush() {
	if len(l.buf) > 0 {
		l.w.Write(append(l.buf, '\n')) //nolint:errcheck // the log is best effort
		l.buf = l.buf[:0]
	}
}
