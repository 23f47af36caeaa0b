// Command calibrate-gate measures the gate's error rates on this machine. For each subject kind
// (a command sleeping, a CPU-bound Python command, a Python function in the worker, a Go
// function, the mock model, a tiny torch model in the Python worker, OpenAI streaming against the
// mockserver) it runs the unchanged scenario at default settings again and again and counts the
// `inferbench compare` of two runs that exit 3 (false failures), then slows the primary metric by
// 10% and counts the comparisons that exit 3 (detections), quiet or with a busy loop on another
// core (-load). It prints a table and, with -write, puts it into docs/measurements/verdicts.md
// between its markers. With -path ref it measures the paired path instead (`run --baseline-ref`, ref.go): an
// unchanged, a 5% and a 10% slower commit against a base, -n rounds per kind. Its section is
// written after each kind and keeps the rows of kinds this invocation did not measure, so kinds
// can be measured one invocation at a time.
//
//	make calibrate-gate N=100
//	go run ./cmd/calibrate-gate -n 100 -write docs/measurements/verdicts.md
//
// The program is its own inferbench binary: with CALIBRATE_GATE_INFERBENCH=1 it is the command
// line, and with CALIBRATE_GATE_INFERBENCH=gofunc the command line with the gofunc kind's
// function registered.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferbench/inferbench"
	"github.com/inferbench/inferbench/internal/base/sysinfo"
)

const (
	modeEnv     = "CALIBRATE_GATE_INFERBENCH"
	funcName    = "calibrate/sha256"
	shaBytesEnv = "CAL_SHA_BYTES"
)

func main() {
	switch os.Getenv(modeEnv) {
	case "gofunc":
		// The function is a benchmark of its own (a registered function needs no definition).
		inferbench.RegisterSetup(funcName, setupSHA)
		inferbench.Main()
	case "1":
		inferbench.Main()
	}
	os.Exit(calibrate(os.Args[1:], os.Stdout, os.Stderr))
}

// setupSHA is the Go function of the gofunc kind: SHA-256 of $CAL_SHA_BYTES bytes.
func setupSHA(ctx context.Context, p inferbench.Params) (func(context.Context) error, func(), error) {
	n, err := strconv.Atoi(os.Getenv(shaBytesEnv))
	if err != nil || n <= 0 {
		return nil, nil, fmt.Errorf("%s=%q: want a positive number of bytes", shaBytesEnv, os.Getenv(shaBytesEnv))
	}
	buf := bytes.Repeat([]byte{0x5a}, n)
	return func(context.Context) error {
		sha256.Sum256(buf)
		return nil
	}, nil, nil
}

type options struct {
	measure    string // "time" or "instructions" (countedKinds)
	path       string // "stored" (two runs, compare) or "ref" (run --baseline-ref: ref.go)
	n, history int
	iterations int // --iterations for every run; 0 keeps the definitions' default
	kinds      []string
	load       string // "off", "on" or "both": the conditions measured (-load)
	python     string
	write      string
	work       string
	keep       bool
	command    string // the command line, for the document
}

// calibrate is the program: it parses its flags, measures each kind and writes the table. It
// returns the exit code.
func calibrate(args []string, stdout, stderr io.Writer) int {
	o, conditions, ks, ok := parseFlags(args, stderr)
	if !ok {
		return 2
	}
	var err error
	o.command = "calibrate-gate " + strings.Join(args, " ")
	if o.work == "" {
		o.work, err = os.MkdirTemp("", "calibrate-gate-")
		if err != nil {
			fmt.Fprintln(stderr, "calibrate-gate:", err)
			return 1
		}
		if !o.keep {
			defer os.RemoveAll(o.work)
		}
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "calibrate-gate:", err)
		return 1
	}
	started := time.Now().UTC()
	load0 := sysinfo.LoadAvg()
	commit()
	if o.path == "ref" {
		return calibrateRef(o, ks, conditions, self, started, load0, stdout, stderr)
	}
	var ts []*tally
	failed := eachKind(conditions, ks, stderr, func(k kind) error {
		t, err := measure(k, self, o, stderr)
		if t != nil {
			ts = append(ts, t)
		}
		return err
	})
	var table bytes.Buffer
	writeTable(&table, ts)
	table.WriteString("\n")
	writeDetails(&table, ts)
	stdout.Write(table.Bytes())
	if o.write != "" {
		body := document(o, ts, table.String(), started, load0)
		old, err := os.ReadFile(o.write)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintln(stderr, "calibrate-gate:", err)
			return 1
		}
		if err := os.WriteFile(o.write, []byte(replaceSection(string(old), body)), 0o644); err != nil {
			fmt.Fprintln(stderr, "calibrate-gate:", err)
			return 1
		}
		fmt.Fprintf(stderr, "calibrate-gate: the table is in %s\n", o.write)
	}
	if failed {
		return 1
	}
	return 0
}

// parseFlags reads the program's flags into options, the conditions to measure each kind
// under (loaded or not, in order) and the kinds. It prints what is wrong and returns false on a
// usage error.
func parseFlags(args []string, stderr io.Writer) (o options, conditions []bool, ks []kind, ok bool) {
	fs := flag.NewFlagSet("calibrate-gate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var kindList string
	fs.IntVar(&o.n, "n", 100, "A/A comparisons and slowdown comparisons per kind (even)")
	fs.IntVar(&o.iterations, "iterations", 0, "measured iterations (requests) per run; 0 keeps the default (30)")
	fs.IntVar(&o.history, "history", 10, "runs of the unchanged scenario stored before counting (the noise-aware thresholds need 10)")
	fs.StringVar(&kindList, "kinds", "", "comma-separated kinds: exec, exec-python, pyfunc, pytest, gofunc, mock, worker, openai (default all)")
	fs.StringVar(&o.path, "path", "stored", "stored: two runs judged by inferbench compare; ref: run --baseline-ref, an unchanged, a 5% and a 10% slower commit against a base, -n rounds")
	fs.StringVar(&o.measure, "measure", "time", "time, or instructions: count under valgrind's callgrind (exec, gofunc, pyfunc, worker), slowed by 1%")
	fs.StringVar(&o.load, "load", "off", "off: as the machine is; on: with a busy loop on another core, as a shared CI runner has; both: each kind quiet, then loaded")
	fs.StringVar(&o.python, "python", "", "the worker's interpreter (INFERBENCH_PYTHON; default: inferbench's own choice)")
	fs.StringVar(&o.write, "write", "", "put the table into this markdown file, between its calibrate-gate markers")
	fs.StringVar(&o.work, "work", "", "workspace folder (default: a temporary one, removed at the end)")
	fs.BoolVar(&o.keep, "keep", false, "keep the workspace (run folders, stores)")
	if err := fs.Parse(args); err != nil {
		return o, nil, nil, false
	}
	if o.n < 2 || o.n%2 != 0 || o.history < 0 {
		fmt.Fprintln(stderr, "calibrate-gate: -n must be even and at least 2, -history at least 0")
		return o, nil, nil, false
	}
	if kindList != "" {
		o.kinds = strings.Split(kindList, ",")
	}
	switch o.load {
	case "off":
		conditions = []bool{false}
	case "on":
		conditions = []bool{true}
	case "both":
		conditions = []bool{false, true}
	default:
		fmt.Fprintf(stderr, "calibrate-gate: -load %q: want off, on or both\n", o.load)
		return o, nil, nil, false
	}
	if o.python != "" && strings.ContainsRune(o.python, filepath.Separator) {
		// The runs' working folder is the workspace: a relative path would not hold there.
		abs, err := filepath.Abs(o.python)
		if err != nil {
			fmt.Fprintln(stderr, "calibrate-gate: -python:", err)
			return o, nil, nil, false
		}
		o.python = abs
	}
	if o.path != "stored" && o.path != "ref" {
		fmt.Fprintf(stderr, "calibrate-gate: -path %q: want stored or ref\n", o.path)
		return o, nil, nil, false
	}
	if o.measure != "time" && o.measure != "instructions" {
		fmt.Fprintf(stderr, "calibrate-gate: -measure %q: want time or instructions\n", o.measure)
		return o, nil, nil, false
	}
	ks, err := pick(o.kinds, o.measure)
	if err != nil {
		fmt.Fprintln(stderr, "calibrate-gate:", err)
		return o, nil, nil, false
	}
	return o, conditions, ks, true
}

// measure runs one kind: the history, then n A/A and n slowdown comparisons. Runs go
// A0 S0 A1 A2 S1 A3 ...: each A run is compared with the A run before it, and each slowed run,
// never stored, with the A run before it and the one after it.
func measure(k kind, bin string, o options, stderr io.Writer) (*tally, error) {
	t := newTally(k)
	start := time.Now()
	defer func() { t.elapsed = time.Since(start) }()
	dir := filepath.Join(o.work, strings.ReplaceAll(k.name, loadedSuffix, "-loaded"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeFiles(dir, k.files); err != nil {
		return nil, err
	}
	mode := "1"
	if strings.TrimSuffix(k.name, loadedSuffix) == "gofunc" {
		mode = "gofunc"
	}
	env := kindEnv(o, bin, mode, nil)
	w := &workspace{k: k, dir: dir, bin: bin, env: env, stderr: stderr, flags: k.flags}
	if o.iterations > 0 {
		w.flags = append(append([]string(nil), k.flags...), "--iterations", strconv.Itoa(o.iterations))
	}
	run := func(extra map[string]string, store bool) (string, error) {
		d, err := w.run(extra, store)
		t.runs++
		if err != nil {
			return "", err
		}
		if t.iterations == 0 {
			_, n, status, err := runInfo(d, k.primary)
			if err != nil {
				return "", err
			}
			if status != "ok" {
				return "", fmt.Errorf("the scenario's status is %q (%s)", status, d)
			}
			t.iterations = n
		}
		return d, nil
	}

	if k.pairs {
		return t, measurePairs(k, t, o, run, w, start, stderr)
	}
	var medians []float64
	for i := 0; i < o.history; i++ {
		d, err := run(k.base, true)
		if err != nil {
			return t, err
		}
		if m, _, _, err := runInfo(d, k.primary); err == nil && m > 0 {
			medians = append(medians, m)
		}
	}
	prev, err := run(k.base, true)
	if err != nil {
		return t, err
	}
	if len(medians) == 0 {
		if m, _, _, err := runInfo(prev, k.primary); err == nil && m > 0 {
			medians = append(medians, m)
		}
	}
	if len(medians) == 0 {
		return t, fmt.Errorf("no %s in the unchanged runs", k.primary)
	}
	med := median(medians)
	t.scenario = withPilot(k.scenario, k.primary, med, fmt.Sprintf("%d unchanged runs'", len(medians)))
	slowEnv := withEnvMap(k.base, k.slow(med))
	fmt.Fprintf(stderr, "calibrate-gate: %s: %s median %.4g over %d runs; slowed: %v\n", k.name, k.primary, med, len(medians), k.slow(med))

	for i := 0; i < o.n/2; i++ {
		s, err := run(slowEnv, false)
		if err != nil {
			t.errors = append(t.errors, err.Error())
		}
		a1, err := run(k.base, true)
		if err != nil {
			return t, err
		}
		t.compareAA(w, prev, a1)
		if s != "" {
			t.compareSlow(w, prev, s)
			t.compareSlow(w, a1, s)
		}
		a2, err := run(k.base, true)
		if err != nil {
			return t, err
		}
		t.compareAA(w, a1, a2)
		prev = a2
		if (i+1)%5 == 0 || i+1 == o.n/2 {
			fmt.Fprintf(stderr, "calibrate-gate: %s: A/A %d, %d failed; slowdown %d, %d found; %d errors; %s\n",
				k.name, t.aa, t.aaFailed, t.slow, t.slowFound, len(t.errors), time.Since(start).Round(time.Second))
		}
	}
	return t, nil
}

// eachKind measures each kind under each condition (loaded: with a busy loop beside it, the
// kind's name marked) and reports whether any failed; each failure is printed.
func eachKind(conditions []bool, ks []kind, stderr io.Writer, measure func(kind) error) (failed bool) {
	for _, loaded := range conditions {
		for _, k := range ks {
			var stop func()
			if loaded {
				k.name += loadedSuffix
				stop = busyLoop()
			}
			err := measure(k)
			if stop != nil {
				stop()
			}
			if err != nil {
				fmt.Fprintf(stderr, "calibrate-gate: %s: %v\n", k.name, err)
				failed = true
			}
		}
	}
	return failed
}

// loadedSuffix marks a kind measured with a busy loop beside it, in its name, its workspace and
// the table.
const loadedSuffix = " (loaded)"

// busyLoop keeps one core busy until stop is called: one thread spinning, as a neighbour's build
// or test on a shared 2-core CI runner does. The runs share the machine's other core with it, or
// this one when the scheduler moves them.
func busyLoop() (stop func()) {
	var done atomic.Bool
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		runtime.LockOSThread()
		x := uint64(1)
		for !done.Load() {
			for range 1 << 16 {
				x = x*6364136223846793005 + 1442695040888963407
			}
		}
		sink.Store(x)
	}()
	return func() { done.Store(true); <-finished }
}

// sink keeps the busy loop's arithmetic from being optimised away.
var sink atomic.Uint64

// cleanEnv drops what would change the runs or send their output elsewhere: another store, a
// CI summary file, an interpreter forced from outside.
func cleanEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "INFERBENCH_STORE", "GITHUB_STEP_SUMMARY", "INFERBENCH_BASELINE":
			continue
		}
		out = append(out, kv)
	}
	return out
}

func withEnv(env []string, extra map[string]string) []string {
	out := append([]string(nil), env...)
	for k, v := range extra {
		out = append(out, k+"="+v)
	}
	return out
}

func withEnvMap(base, over map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}

// machine describes this machine for the document.
func machine() string {
	cpu := runtime.GOARCH
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel := runtime.GOOS
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel += " " + strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%s, %d cores, %s", cpu, runtime.NumCPU(), kernel)
}

// commit is the checkout's commit when the program started (main reads it first): a table
// written at the end of an hour's calibration names the code measured, not a commit made
// meanwhile.
var commit = sync.OnceValue(func() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
})

// measurePairs is measure for subjects whose runs cost seconds: after the history, m runs of the
// unchanged scenario (stored), the fewest with m(m-1)/2 >= n, compared in every pair; then s
// slowed runs (not stored), the fewest with s*m >= n, each compared with every unchanged run. The comparisons
// share runs, so they are not independent: one slow run fails against all the others.
func measurePairs(k kind, t *tally, o options, run func(map[string]string, bool) (string, error), w *workspace, start time.Time, stderr io.Writer) error {
	m := 2
	for m*(m-1)/2 < o.n {
		m++
	}
	s := (o.n + m - 1) / m
	var as []string
	var medians []float64
	// The history first, as in the chain: a comparison's noise threshold comes from the runs
	// stored before it.
	for i := 0; i < o.history; i++ {
		d, err := run(k.base, true)
		if err != nil {
			return err
		}
		if med, _, _, err := runInfo(d, k.primary); err == nil && med > 0 {
			medians = append(medians, med)
		}
	}
	for i := 0; i < m; i++ {
		d, err := run(k.base, true)
		if err != nil {
			return err
		}
		as = append(as, d)
		if med, _, _, err := runInfo(d, k.primary); err == nil && med > 0 {
			medians = append(medians, med)
		}
	}
	if len(medians) == 0 {
		return fmt.Errorf("no %s in the unchanged runs", k.primary)
	}
	med := median(medians)
	t.scenario = withPilot(k.scenario, k.primary, med, fmt.Sprintf("%d unchanged runs'", len(medians)))
	slowEnv := withEnvMap(k.base, k.slow(med))
	var ss []string
	for i := 0; i < s; i++ {
		d, err := run(slowEnv, false)
		if err != nil {
			t.errors = append(t.errors, err.Error())
			continue
		}
		ss = append(ss, d)
	}
	for i := range as {
		for j := i + 1; j < len(as); j++ {
			t.compareAA(w, as[i], as[j])
		}
	}
	for _, sd := range ss {
		for _, a := range as {
			t.compareSlow(w, a, sd)
		}
	}
	t.pairs = fmt.Sprintf("%d unchanged runs in %d pairs, %d slowed runs against each", len(as), len(as)*(len(as)-1)/2, len(ss))
	fmt.Fprintf(stderr, "calibrate-gate: %s: A/A %d, %d failed; slowdown %d, %d found; %d errors; %s\n",
		k.name, t.aa, t.aaFailed, t.slow, t.slowFound, len(t.errors), time.Since(start).Round(time.Second))
	return nil
}
