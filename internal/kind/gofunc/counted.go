package gofunc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/inferbench/inferbench/internal/base/callgrind"
	"github.com/inferbench/inferbench/internal/base/procgroup"
	"github.com/inferbench/inferbench/internal/base/tail"
	"github.com/inferbench/inferbench/subject"
)

// Instruction mode for a Go function (subject.Spec.Measure): the binary runs again under
// valgrind's callgrind, in a hidden mode that sets the function up and runs one call per
// iteration when asked (ServeCounted). Collection starts off; a measured call is bracketed by
// callgrind's client requests (zero, collect on; the call; collect off, dump), so each dump file
// holds exactly that call's costs, and the harness around it is not counted. Collection is a
// thread's own in callgrind: the calling goroutine is locked to its thread, which alone is
// counted; goroutines the function starts, and the runtime's background work (the collector's
// workers), run on other threads uncounted. Warm-up calls run uncounted. The garbage is
// collected before each measured call, so that a collection the earlier calls left pending does
// not fall into it, and the allocation profiler is off (callgrind.Environ's GODEBUG): its
// sampling is random. What still moves a count is the heap's state, for a function that
// allocates: the page allocator's, and whether the background scavenger gave back a page the
// call reuses, which it then zeroes.
//
// Note: callgrind's --toggle-collect=FUNCTION (collect inside a named function) gives wrong
// counts for Go, whose goroutines switch stacks and whose runtime runs on the same threads;
// the client requests mark the call itself.

// The hidden mode's environment: the function's name, and its parameters as JSON.
const (
	countFuncEnv   = "INFERBENCH_COUNT_FUNC"
	countParamsEnv = "INFERBENCH_COUNT_PARAMS"
)

// The descriptors of the hidden mode's pipes (exec.Cmd.ExtraFiles): requests in, replies out.
// The function's own stdout and stderr stay free for what it prints.
const (
	requestFD = 3
	replyFD   = 4
)

// ServeCounted runs the hidden mode of a binary re-executed to count a registered function, when
// getenv says it is one: the function's setup, then one call per request until the requests
// end, then its cleanup. It returns false, doing nothing, in every other process. inferbench.Run
// (and so inferbench.Main and the inferbench command) calls it first; a test binary that counts
// its functions calls it from TestMain.
func ServeCounted(ctx context.Context, getenv func(string) string) (served bool, err error) {
	name := getenv(countFuncEnv)
	if name == "" {
		return false, nil
	}
	in, out := os.NewFile(requestFD, "requests"), os.NewFile(replyFD, "replies")
	if in == nil || out == nil {
		return true, fmt.Errorf("%s is set but descriptors %d and %d are not open: this mode is inferbench's own, for counting a Go function", countFuncEnv, requestFD, replyFD)
	}
	defer out.Close()
	reply := func(err error) error {
		msg := "ok"
		pe, _ := err.(*panicError) // a call's; one in the setup is an error of the setup
		switch {
		case pe != nil:
			msg = "panic " + strings.ReplaceAll(fmt.Sprint(pe.value), "\n", " ")
		case err != nil:
			msg = "error " + strings.ReplaceAll(err.Error(), "\n", " ")
		}
		_, werr := fmt.Fprintln(out, msg)
		return werr
	}
	fn, cleanup, err := countedSetup(ctx, name, getenv(countParamsEnv))
	if err != nil {
		return true, reply(err)
	}
	fn = recovered(fn)
	if cleanup != nil {
		defer cleanup()
	}
	if err := reply(nil); err != nil {
		return true, err
	}
	// Callgrind's collection state is a thread's own: the goroutine that turns it on and off must
	// stay on one thread, or a call that moved to another thread is counted in part, and the
	// next calls' windows are shifted (counts of 31 and 1932 instructions for a call of three
	// million were read).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		var err error
		switch sc.Text() {
		case "warmup":
			err = fn(ctx)
		case "measure":
			runtime.GC()
			callgrind.ZeroStats()
			callgrind.ToggleCollect()
			err = fn(ctx)
			callgrind.ToggleCollect()
			callgrind.DumpStats()
		default:
			err = fmt.Errorf("unknown request %q", sc.Text())
		}
		if err := reply(err); err != nil {
			return true, err
		}
		if _, ok := err.(*panicError); ok {
			return true, nil // the function's state is unknown after its panic: no more calls
		}
	}
	return true, sc.Err()
}

// panicError is a function's panic, recovered in the counted process and told to the parent,
// which reports it as time mode does ("panic: VALUE").
type panicError struct{ value any }

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.value) }

// recovered returns fn with its panic returned as a *panicError.
func recovered(fn Func) Func {
	return func(ctx context.Context) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = &panicError{p}
			}
		}()
		return fn(ctx)
	}
}

func countedSetup(ctx context.Context, name, params string) (Func, func(), error) {
	if err := callgrind.Supported(); err != nil {
		return nil, nil, err
	}
	if !callgrind.Running() {
		return nil, nil, errors.New("not running under valgrind")
	}
	setup, ok := funcs.Get(name)
	if !ok {
		return nil, nil, &NotRegisteredError{Func: name}
	}
	var p subject.Params
	if params != "" {
		if err := json.Unmarshal([]byte(params), &p); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", countParamsEnv, err)
		}
	}
	fn, cleanup, err := safeSetup(ctx, setup, p)
	if err != nil {
		return nil, nil, fmt.Errorf("setup %s: %w", name, err)
	}
	return fn, cleanup, nil
}

// safeSetup calls setup, its panic returned as a *panicError.
func safeSetup(ctx context.Context, setup Setup, p subject.Params) (fn Func, cleanup func(), err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{r}
		}
	}()
	return setup(ctx, p)
}

// Counted is a Go function opened in instruction mode: its calls run in a copy of the binary
// under callgrind, one at a time.
type Counted struct {
	name    string
	vg      callgrind.Valgrind
	tmp     string // callgrind's folder
	keepDir string // the scenario's profiles folder; "" keeps nothing
	redact  func(string) string
	cmd     *exec.Cmd
	done    func() // procgroup's record of the process
	stderr  *tail.Buffer

	mu    sync.Mutex
	req   io.WriteCloser
	rep   *bufio.Reader
	dumps int // dump files written so far: the next is callgrind.out.(dumps+1)
	kept  []string
	dead  error // the process ended: every later call fails with this
}

var (
	_ subject.Subject    = (*Counted)(nil)
	_ subject.Counter    = (*Counted)(nil)
	_ subject.Sequential = (*Counted)(nil)
)

// openCounted starts the copy of the binary under callgrind and waits for the function's setup.
func openCounted(ctx context.Context, s subject.Spec, c *Config) (subject.Subject, error) {
	if os.Getenv(countFuncEnv) != "" {
		return nil, fmt.Errorf("instruction mode: %s runs inside a process that counts %s: a counted function cannot count another", c.Func, os.Getenv(countFuncEnv))
	}
	if err := callgrind.Supported(); err != nil {
		return nil, err
	}
	vg, err := callgrind.FindContext(ctx)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("instruction mode: finding this binary to run it under callgrind: %w", err)
	}
	params, err := json.Marshal(s.Params)
	if err != nil {
		return nil, fmt.Errorf("instruction mode: parameters: %w", err)
	}
	tmp, err := os.MkdirTemp("", "inferbench-callgrind-")
	if err != nil {
		return nil, fmt.Errorf("instruction mode: %w", err)
	}
	k := &Counted{name: c.Func, vg: vg, tmp: tmp, keepDir: s.ProfileDir, redact: s.Redact, stderr: &tail.Buffer{Max: 4096}}
	if err := k.start(ctx, s, exe, params); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return k, nil
}

func (k *Counted) start(ctx context.Context, s subject.Spec, exe string, params []byte) error {
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return err
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return err
	}
	argv := k.vg.Args(callgrind.Options{Out: filepath.Join(k.tmp, "callgrind.out")}, exe)
	cmd := exec.Command(argv[0], argv[1:]...)
	env := s.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = callgrind.Environ(append(env[:len(env):len(env)], countFuncEnv+"="+k.name, countParamsEnv+"="+string(params)))
	cmd.ExtraFiles = []*os.File{reqR, repW}
	ownGroup(cmd)
	var out io.Writer = io.Discard
	if s.Output != nil {
		out = s.Output
	}
	cmd.Stdout = out
	k.stderr.W = out
	cmd.Stderr = k.stderr
	err = cmd.Start()
	reqR.Close()
	repW.Close()
	if err != nil {
		reqW.Close()
		repR.Close()
		return fmt.Errorf("instruction mode: starting %s under callgrind: %w", exe, err)
	}
	k.cmd, k.req, k.rep = cmd, reqW, bufio.NewReader(repR)
	k.done = procgroup.Add(cmd.Process.Pid)
	if err := k.await(ctx); err != nil {
		k.Close()
		return fmt.Errorf("instruction mode: setting %s up under callgrind: %w", k.name, err)
	}
	return nil
}

// await reads one reply; the process's end or ctx's cancellation ends the wait (the process is
// then killed).
func (k *Counted) await(ctx context.Context) error {
	type line struct {
		s   string
		err error
	}
	got := make(chan line, 1)
	go func() {
		s, err := k.rep.ReadString('\n')
		got <- line{strings.TrimSpace(s), err}
	}()
	var l line
	select {
	case l = <-got:
	case <-ctx.Done():
		k.kill()
		<-got
		return ctx.Err()
	}
	switch {
	case l.err != nil:
		k.kill()
		if p := k.panicked(); p != "" {
			// A panic the function's own goroutines raised: not recovered, the process ended.
			k.dead = fmt.Errorf("%s (the process counting %s ended)%s", p, k.name, k.stderrTail())
			return k.dead
		}
		k.dead = fmt.Errorf("the process counting %s ended (%v)%s; a binary that registers Go functions must call inferbench.Main (or inferbench.Run) for instruction mode", k.name, l.err, k.stderrTail())
		return k.dead
	case l.s == "ok":
		return nil
	case strings.HasPrefix(l.s, "error "):
		return errors.New(strings.TrimPrefix(l.s, "error "))
	case strings.HasPrefix(l.s, "panic "):
		// The process ends after a panic: every later call fails with it.
		k.dead = errors.New("panic: " + strings.TrimPrefix(l.s, "panic "))
		return k.dead
	}
	return fmt.Errorf("unexpected reply %q from the process counting %s", l.s, k.name)
}

// panicked returns the "panic: ..." line of a Go panic in the process's stderr, or "".
func (k *Counted) panicked() string {
	for line := range strings.Lines(k.stderr.String()) {
		if strings.HasPrefix(line, "panic: ") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

func (k *Counted) stderrTail() string {
	if t := strings.TrimSpace(k.stderr.String()); t != "" {
		return "; stderr: " + t
	}
	return ""
}

func (k *Counted) kill() {
	if k.cmd != nil && k.cmd.Process != nil {
		k.cmd.Process.Kill()
	}
}

// Do makes one call in the counted process: a warm-up call uncounted, a measured call counted,
// its instructions and estimated cycles reported.
func (k *Counted) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var o subject.Observation
	if k.dead != nil {
		return o, k.dead
	}
	req := "measure"
	if r.Warmup {
		req = "warmup"
	}
	o.Start = time.Now()
	if _, err := io.WriteString(k.req, req+"\n"); err != nil {
		k.dead = fmt.Errorf("the process counting %s is gone: %w%s", k.name, err, k.stderrTail())
		return o, k.dead
	}
	err := k.await(ctx)
	o.End = time.Now()
	if r.Warmup || k.dead != nil || ctx.Err() != nil {
		return o, err
	}
	k.dumps++
	file := filepath.Join(k.tmp, "callgrind.out."+strconv.Itoa(k.dumps))
	counts, cerr := callgrind.ReadFile(file)
	if cerr != nil {
		return o, errors.Join(err, fmt.Errorf("instruction mode: %w", cerr))
	}
	if err == nil {
		o.Values = counts.Values()
		if k.keepDir != "" && k.kept == nil {
			k.kept, cerr = callgrind.Keep(k.keepDir, []string{file}, k.redact)
			if cerr != nil {
				err = fmt.Errorf("instruction mode: keeping the callgrind file: %w", cerr)
			}
		}
	}
	os.Remove(file)
	return o, err
}

// OneAtATime implements subject.Sequential.
func (k *Counted) OneAtATime() string {
	return "a Go function counted under callgrind runs one call at a time in its own process"
}

// Identity implements subject.Counter: valgrind's, the CPU's and Go's versions.
func (k *Counted) Identity() map[string]string {
	id := k.vg.Identity()
	id["go"] = runtime.Version()
	return id
}

// Kept implements subject.Counter: the callgrind file of the first measured call.
func (k *Counted) Kept() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.kept...)
}

// Close ends the requests, lets the process run the function's cleanup and exit, and removes
// callgrind's folder.
func (k *Counted) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.req != nil {
		k.req.Close()
		k.req = nil
	}
	var err error
	if k.cmd != nil {
		wait := make(chan error, 1)
		go func() { wait <- k.cmd.Wait() }()
		select {
		case err = <-wait:
		case <-time.After(30 * time.Second):
			k.kill()
			err = <-wait
		}
		k.done()
		k.cmd = nil
		if err != nil && k.dead == nil {
			err = fmt.Errorf("the process counting %s: %w%s", k.name, err, k.stderrTail())
		} else {
			err = nil
		}
	}
	os.RemoveAll(k.tmp)
	return err
}
