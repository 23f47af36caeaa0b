package worker

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/callgrind"
	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/subject"
)

// Instruction mode for the worker (subject.Spec.Measure): the worker process runs under
// valgrind's callgrind, and the worker brackets each measured call with callgrind's client
// requests (inferbench_worker/callgrind.py): zero, the call, dump. Each call's costs, on every
// thread (torch's intra-op threads included), go into a file of their own: callgrind.out.1, .2, ... in the order of the calls. Warm-up calls are not
// counted. The run reply says how many calls it counted ("counted") and what the counts depend
// on in the worker ("counted_by": the interpreter, the numeric libraries loaded).

// countEnv turns the worker's counting on (inferbench_worker/callgrind.py's ENV).
const countEnv = "INFERBENCH_WORKER_COUNT"

// bytecodeEnv names the folder where the counted worker writes bytecode.json once: the bytecode
// instructions each Python function executed in one more call (inferbench_worker/bytecode.py),
// what explain compares for Python functions, whose costs callgrind's files give only as the
// interpreter's.
const bytecodeEnv = "INFERBENCH_WORKER_BYTECODE"

// outEnv tells the worker callgrind's output file: a worker that has imported torch makes one
// more pass after the counted calls with each torch operator between client requests of its own
// (inferbench_worker/operators.py), and reads each of those dumps back itself, writing
// operators.json beside bytecode.json. Callgrind numbers its dumps in the order of the requests,
// so the reply says how many such dumps it made ("other_dumps"), which the files of the next
// counted calls come after.
const outEnv = "INFERBENCH_WORKER_CALLGRIND_OUT"

// threadsEnv is set to 1 for a counted worker unless its environment (the definition's env, the
// caller's) sets it: a framework's intra-op pool (torch's, OpenMP) waits for work by spinning, and
// valgrind runs one thread at a time, so the spins count as many instructions as the scheduler
// lets them, differently in every call. Under valgrind more threads make nothing faster.
const threadsEnv = "OMP_NUM_THREADS"

// Timeouts in instruction mode where the definition sets none: under valgrind an interpreter
// starts, and a framework imports, some 50 times slower.
const (
	countedStartTimeout    = 30 * time.Minute
	countedTeardownTimeout = 5 * time.Minute
)

// counter is a worker's instruction mode.
type counter struct {
	vg      callgrind.Valgrind
	tmp     string // callgrind's folder
	keepDir string // the scenario's profiles folder; "" keeps nothing
	dumps   int    // dump files read so far
	kept    []string
	by      map[string]string // the worker's "counted_by"
	redact  func(string) string
}

// countedCommand prepares instruction mode: argv under callgrind, the environment that turns
// the worker's counting on.
func countedCommand(ctx context.Context, s subject.Spec, c *Config, argv, env []string) (*counter, []string, []string, error) {
	vg, err := callgrind.FindContext(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	tmp, err := os.MkdirTemp("", "inferbench-callgrind-")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("instruction mode: %w", err)
	}
	if c.Timeouts.Start == 0 {
		c.Timeouts.Start = countedStartTimeout
	}
	if c.Timeouts.Teardown == 0 {
		c.Timeouts.Teardown = countedTeardownTimeout
	}
	k := &counter{vg: vg, tmp: tmp, keepDir: s.ProfileDir, redact: s.Redact}
	if len(c.Command) == 0 {
		argv[0] = interpreter(ctx, argv[0], s.Dir, env)
	}
	// Collecting from the start: collection is a thread's own, and a framework's threads work
	// on the call beside the calling one; the zero and dump requests cover every thread.
	// Instrumented late: the worker turns instrumentation on before its first call, so the
	// interpreter's start and the framework's import run uninstrumented (torch's import: 120 s
	// instead of 752 s here).
	out := filepath.Join(tmp, "callgrind.out")
	argv = vg.Args(callgrind.Options{Out: out, AtStart: true, Late: true}, argv...)
	env = setenv(setenv(callgrind.Environ(env), countEnv, "callgrind"), outEnv, out)
	if _, set := pyenv.Lookup(env, threadsEnv); !set {
		env = append(env, threadsEnv+"=1")
	}
	if k.keepDir != "" {
		env = setenv(env, bytecodeEnv, k.keepDir)
	}
	return k, argv, env, nil
}

// interpreter returns the program Python runs as (sys.executable): a launcher in front of it (a
// pyenv shim is a shell script that starts Python in turn) would be what valgrind runs, and the
// interpreter would run uncounted. The name as given when Python cannot say within
// callgrind.ProbeTimeout.
func interpreter(ctx context.Context, py, dir string, env []string) string {
	ctx, cancel := context.WithTimeout(ctx, callgrind.ProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", "import sys; print(sys.executable)")
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, env, time.Second
	out, err := cmd.Output()
	if exe := strings.TrimSpace(string(out)); err == nil && filepath.IsAbs(exe) {
		return exe
	}
	return py
}

// attach reads the dump files of the n calls a run reply counted and adds each call's counts to
// its observation; the first measured call's file is kept. The caller holds the worker's lock.
func (k *counter) attach(rr *runReply, obs []subject.Observation) error {
	if rr.Counted != len(obs) {
		return fmt.Errorf("instruction mode: the worker counted %d of %d calls (a worker command that does not count: instruction mode needs inferbench's own worker)", rr.Counted, len(obs))
	}
	if len(rr.CountedBy) > 0 {
		k.by = rr.CountedBy
	}
	for i := range obs {
		k.dumps++
		file := filepath.Join(k.tmp, "callgrind.out."+strconv.Itoa(k.dumps))
		c, err := callgrind.ReadFile(file)
		if err != nil {
			return fmt.Errorf("instruction mode: %w", err)
		}
		if obs[i].Values == nil {
			obs[i].Values = map[string]float64{}
		}
		maps.Copy(obs[i].Values, c.Values())
		if k.keepDir != "" && k.kept == nil {
			if k.kept, err = callgrind.Keep(k.keepDir, []string{file}, k.redact); err != nil {
				return fmt.Errorf("instruction mode: keeping the callgrind file: %w", err)
			}
			continue
		}
		os.Remove(file)
	}
	if rr.Bytecode != "" && k.keepDir != "" {
		k.kept = append(k.kept, rr.Bytecode)
	}
	if rr.Operators != "" && k.keepDir != "" {
		k.kept = append(k.kept, rr.Operators)
	}
	k.dumps += rr.OtherDumps
	return nil
}

// Identity implements subject.Counter: valgrind's, the CPU's, the interpreter's and the numeric
// libraries' versions.
func (w *Worker) Identity() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.count == nil {
		return nil
	}
	id := w.count.vg.Identity()
	maps.Copy(id, w.count.by)
	return id
}

// Kept implements subject.Counter: the callgrind file of the first measured call, and the
// worker's bytecode.json and operators.json.
func (w *Worker) Kept() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.count == nil {
		return nil
	}
	return slices.Clone(w.count.kept)
}
