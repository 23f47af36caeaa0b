// Package gofunc is the subject for Go functions registered by a program that links inferbench as a
// library: inferbench.Register("name", fn) and inferbench.Main() make a user's program a benchmark
// binary whose definitions say `subject: {kind: gofunc, func: name}`.
package gofunc

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferbench/inferbench/internal/base/registry"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/subject"
)

// Func is one iteration of a registered benchmark.
type Func func(ctx context.Context) error

// Setup prepares a benchmark for a scenario (load a model, build inputs) and returns its iteration
// function and an optional cleanup. Setup time is reported as load_time_ms.
type Setup func(ctx context.Context, p subject.Params) (fn Func, cleanup func(), err error)

var funcs = registry.New[Setup]("gofunc:")

// Register adds a function run once per iteration.
func Register(name string, fn Func) {
	RegisterSetup(name, func(context.Context, subject.Params) (Func, func(), error) { return fn, nil, nil })
}

// RegisterSetup adds a benchmark with per-scenario setup. It panics on a duplicate name.
func RegisterSetup(name string, setup Setup) { funcs.Add(name, setup) }

// Names returns the registered names, sorted.
func Names() []string { return funcs.Names() }

// Config is the `subject:` block of a gofunc definition.
type Config struct {
	Func string `yaml:"func"` // the registered name
	// IterationTime is how long one iteration calls the function for, at least (like go test's
	// -benchtime, per iteration): the warm-up calls find how many calls that takes, and every
	// measured iteration makes that many, reporting the time per call. Nil means
	// DefaultIterationTime; 0 makes one call per iteration.
	IterationTime *time.Duration `yaml:"iteration_time"`
}

// DefaultIterationTime is a measured iteration's length when the definition does not say: 30
// iterations measure at least 0.6 s of calls. A 0.76 ms function measured for 23 ms (30 single
// calls) had run medians 0.72 to 1.27 ms apart on the 2-core development machine
// (docs/definitions.md).
const DefaultIterationTime = 20 * time.Millisecond

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.Func == "" {
		return fmt.Errorf(`missing "func" (registered: %v)`, Names())
	}
	if c.IterationTime != nil && *c.IterationTime < 0 {
		return fmt.Errorf("iteration_time %v is negative", *c.IterationTime)
	}
	return nil
}

// iterationTime returns the configured iteration time or the default.
func (c *Config) iterationTime() time.Duration {
	if c.IterationTime == nil {
		return DefaultIterationTime
	}
	return *c.IterationTime
}

func init() {
	subject.Register(subject.Kind{
		Name:      "gofunc",
		Config:    func() any { return &Config{} },
		Open:      Open,
		InProcess: true,
		// Counted in a copy of the binary under callgrind (counted.go).
		Instructions: true,
	})
}

// Subject is an open gofunc subject.
type Subject struct {
	fn      Func
	cleanup func()
	target  time.Duration // Config.IterationTime
	// calls is how many calls an iteration makes: 1 until a warm-up call has timed the
	// function, then as many as last lasted target, fixed from the first measured iteration on.
	calls    atomic.Int64
	last     atomic.Int64 // the last iteration's wall time (ns) before cpuEvery was fixed; 0 before the first
	measured atomic.Int64 // measured iterations so far
	every    atomic.Int64 // cpuEvery's answer, fixed at the first measured iteration; 0 before
}

// cpuEvery is how many measured iterations there are to one that reads the CPU clock: as many as
// keep the reads' cost (cpuReadCost) within cpuShare of the iterations' time (at most 1,000),
// judged from the last warm-up iteration, or without one from the first measured iteration
// (which reads it), and fixed from then on.
func (s *Subject) cpuEvery() int64 {
	if e := s.every.Load(); e > 0 {
		return e
	}
	last := s.last.Load()
	if last == 0 {
		return 1
	}
	e := min(1000, max(1, int64(math.Ceil(float64(cpuReadCost())/(cpuShare*float64(last))))))
	s.every.CompareAndSwap(0, e)
	return s.every.Load()
}

// cpuShare is the most of a measured iteration's time the CPU clock's reads may cost.
const cpuShare = 0.01

// cpuReadCost is a pair of thread-clock reads' cost (ns), measured once: the least of 8 batches
// of 4 pairs, so that a batch the scheduler preempted does not count. One preemption in a single
// batch of 16 reads can make the cost read hundreds of µs and cpuEvery 1000, and then no measured
// iteration of a 500-iteration scenario reads the clock: the example suite's go-sha256 lost
// cpu_ms in two loaded test runs (TestExampleSuite) until the cost was the least of several.
var cpuReadCost = sync.OnceValue(func() int64 {
	const batches, pairs = 8, 4
	least := int64(math.MaxInt64)
	for range batches {
		t0 := time.Now()
		for range 2 * pairs {
			threadCPU()
		}
		least = min(least, int64(time.Since(t0))/pairs)
	}
	return max(1, least)
})

var (
	_ subject.Subject  = (*Subject)(nil)
	_ subject.Profiler = (*Subject)(nil)
)

// Open runs the function's setup.
func Open(ctx context.Context, s subject.Spec) (subject.Subject, error) {
	c, _ := s.Config.(*Config)
	if c == nil {
		return nil, fmt.Errorf("gofunc: missing configuration")
	}
	setup, ok := funcs.Get(c.Func)
	if !ok {
		return nil, &NotRegisteredError{Func: c.Func}
	}
	if s.Measure == subject.MeasureInstructions {
		return openCounted(ctx, s, c)
	}
	fn, cleanup, err := setup(ctx, s.Params)
	if err != nil {
		return nil, fmt.Errorf("setup %s: %w", c.Func, err)
	}
	sub := &Subject{fn: fn, cleanup: cleanup, target: c.iterationTime()}
	sub.calls.Store(1)
	return sub, nil
}

// NotRegisteredError is a definition naming a function this binary does not have. The scenario
// is skipped, not failed: the definition belongs to another binary (one built with
// inferbench.Register and inferbench.Main).
type NotRegisteredError struct{ Func string }

func (e *NotRegisteredError) Error() string { return e.SkipReason() }

// SkipReason says why the scenario is skipped.
func (e *NotRegisteredError) SkipReason() string {
	return fmt.Sprintf("Go function %q is not registered in this binary (registered: %v); run the binary that registers it (inferbench.Register + inferbench.Main)", e.Func, Names())
}

// Do makes one iteration's calls: one until a warm-up iteration has timed the function, then as
// many as last at least the iteration time, as `go test` grows b.N (at most 100 times the calls of
// the warm-up before). Several calls report latency_ms per call (their mean) and count as that
// many items. A request of an open loop (Scheduled set) is one call.
//
// Note: the calls per iteration are set by the warm-up and then fixed, not grown within the
// measured phase as `go test` does, so every measured iteration is the same work and a run
// with warmup_iterations: 0 (or iteration_time: 0) measures single calls, as before.
func (s *Subject) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	k := s.calls.Load()
	if !r.Scheduled.IsZero() {
		k = 1
	}
	var o subject.Observation
	var err error
	// The iteration's CPU time is its thread's: the goroutine stays on one thread for it. The
	// clock's pair of reads is a pair of system calls (about 1 µs on a VM), the whole cost of a
	// nanosecond function's iteration: measured iterations read it one in cpuEvery, so that it
	// costs at most cpuShare of their time (every iteration of the default 20 ms one).
	readCPU := r.Warmup || s.measured.Add(1)%s.cpuEvery() == 0
	var cpu0 int64
	cpuOK := false
	if readCPU {
		runtime.LockOSThread()
		cpu0, cpuOK = threadCPU()
	}
	o.Start = time.Now()
	done := int64(0)
	for done < k {
		done++
		if err = s.fn(ctx); err != nil || ctx.Err() != nil {
			break
		}
	}
	took := time.Since(o.Start) // the monotonic clock alone: half the cost of a second time.Now
	o.End = o.Start.Add(took)
	if readCPU {
		cpu1, _ := threadCPU()
		runtime.UnlockOSThread()
		if cpuOK {
			o.CPU = time.Duration(cpu1-cpu0) / time.Duration(done)
		}
	}
	if r.Warmup || s.every.Load() == 0 {
		s.last.Store(max(int64(took), 1))
	}
	if k > 1 {
		o.Items = int(done)
		o.Values = map[string]float64{"latency_ms": float64(took) / 1e6 / float64(done)}
	}
	if r.Warmup && err == nil && r.Scheduled.IsZero() && s.target > 0 {
		s.calls.Store(callsFor(s.target, o.End.Sub(o.Start), done))
	}
	return o, err
}

// CPUTime is the metric of an iteration's CPU time per call (ms), Observation.CPU: the thread CPU
// clock of the thread the iteration ran on, locked to it, over the calls of the iteration, beside
// latency_ms. It leaves out the waits for a core, and the work of other goroutines (the
// function's own, the garbage collector's background workers). Recorded where the platform has
// a thread clock (threadCPU), for one measured iteration in cpuEvery.
const CPUTime = "cpu_ms"

// maxCalls bounds the calls of one iteration (a function the clock cannot see).
const maxCalls = 1_000_000_000

// callsFor returns how many calls last target, given that n calls took took: at most 100 times
// n, so that one mismeasured warm-up cannot make the next iteration last minutes.
func callsFor(target, took time.Duration, n int64) int64 {
	if took <= 0 {
		return min(100*n, maxCalls)
	}
	per := float64(took) / float64(n)
	k := int64(math.Min(math.Ceil(float64(target)/per), maxCalls))
	return max(1, min(k, 100*n, maxCalls))
}

// ProfileChunks is how many independent chunks of calls the CPU profile is taken in, and
// profileChunkTime how long each lasts at least (a variable for tests): explain compares a
// function's cost per call across the chunks of two runs, and the CPU profiler samples 100
// times a second, so a chunk needs tens of samples.
const ProfileChunks = 8

var profileChunkTime = 250 * time.Millisecond

// ProfileHz is the CPU profile's samples a second in Profile (the runtime's default is 100).
//
// Note: the profiler's timers count the thread's CPU time, which Linux checks once a kernel tick
// (CONFIG_HZ, 250 on Debian and Ubuntu): asked for 1,000 samples a second, it delivered 250 here,
// each weighed as 1 ms, and a call of 0.48 ms of CPU read 0.12 ms. 250 is the most that such a
// kernel delivers; on a kernel of 100 ticks a second the costs would read 2.5 times low (their
// shares, which explain tests, would not change).
const ProfileHz = 250

// Profile implements subject.Profiler: calls under the Go CPU profiler, written to dir/cpu.pprof
// (go tool pprof reads it), in ProfileChunks chunks of at least n/ProfileChunks calls and
// profileChunkTime each; each chunk's samples carry the pprof labels inferbench_chunk (its
// number) and inferbench_calls (its calls), so that explain can tell them apart and divide by
// the calls. Then n more calls for the allocations' heap profile, dir/heap.pprof.
func (s *Subject) Profile(ctx context.Context, dir string, n int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// One call unprofiled, timed, sets the chunks' calls: by its CPU time where the thread has a
	// clock, since the profiler samples CPU time. On a machine busy with other work a call's wall
	// time is several times its CPU time, and chunks sized by wall time held a fraction of the
	// samples; chunks of 0.25 s of CPU time hold as many however busy the machine is, and take
	// longer there.
	runtime.LockOSThread()
	cpu0, cpuOK := threadCPU()
	start := time.Now()
	err := s.fn(ctx)
	took := time.Since(start)
	if cpu1, _ := threadCPU(); cpuOK && cpu1 > cpu0 {
		took = time.Duration(cpu1 - cpu0)
	}
	runtime.UnlockOSThread()
	if err != nil {
		return nil, fmt.Errorf("profiling: %w", err)
	}
	calls := chunkCalls(n, took)
	path := filepath.Join(dir, "cpu.pprof")
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The profiler's default of 100 samples a second leaves a function of a twentieth of a 2 s
	// pass ten samples, too few to see it change (ProfileHz); the runtime's rate set first is kept by
	// StartCPUProfile, which cannot set its own then and says so on stderr ("runtime: cannot
	// set cpu profile rate until previous profile has finished"), and the profile records the
	// rate used. When another CPU profile runs, the runtime keeps that one's rate and
	// StartCPUProfile fails.
	runtime.SetCPUProfileRate(ProfileHz)
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, fmt.Errorf("pprof: %w (another CPU profile is running?)", err)
	}
	var callErr error
	for k := 1; k <= ProfileChunks && callErr == nil && ctx.Err() == nil; k++ {
		labels := pprof.Labels("inferbench_chunk", strconv.Itoa(k), "inferbench_calls", strconv.FormatInt(calls, 10))
		pprof.Do(ctx, labels, func(ctx context.Context) {
			for i := int64(0); i < calls && callErr == nil; i++ {
				callErr = s.fn(ctx)
			}
		})
	}
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		return nil, err
	}
	if callErr != nil {
		return []string{path}, fmt.Errorf("profiling: %w", callErr)
	}
	heap, err := s.heapProfile(ctx, dir, n)
	if err != nil {
		return []string{path}, err
	}
	return []string{path, heap}, nil
}

// chunkCalls returns the calls of one profiled chunk: n/ProfileChunks at least, and as many as
// take profileChunkTime when one call took took (its CPU time; at most maxCalls).
func chunkCalls(n int, took time.Duration) int64 {
	c := int64((n + ProfileChunks - 1) / ProfileChunks)
	if took <= 0 {
		took = time.Nanosecond
	}
	byTime := math.Ceil(float64(profileChunkTime) / float64(took))
	return max(1, c, int64(math.Min(byTime, maxCalls)))
}

// heapProfile makes n more calls with every 4 KiB allocated sampled (the runtime's default is one
// sample per 512 KiB, which a few calls may never reach) and writes the allocations profile to
// dir/heap.pprof: `go tool pprof -sample_index=alloc_space heap.pprof` shows the functions that
// allocated most. The samples of the whole process are in it, the profiled calls' the densest.
func (s *Subject) heapProfile(ctx context.Context, dir string, n int) (string, error) {
	path := filepath.Join(dir, "heap.pprof")
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 4096
	var callErr error
	for i := 0; i < n && callErr == nil && ctx.Err() == nil; i++ {
		callErr = s.fn(ctx)
	}
	runtime.GC() // the profile's counts are as of the last collection
	runtime.MemProfileRate = old
	if callErr != nil {
		return "", fmt.Errorf("profiling: %w", callErr)
	}
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

// Close runs the cleanup.
func (s *Subject) Close() error {
	if s.cleanup != nil {
		s.cleanup()
	}
	return nil
}

// Built-in functions, available in every binary: a no-op, which measures the harness's own cost
// per iteration, a SHA-256 of 64 KiB, a small fixed CPU load for calibration, and the summary of
// 10,000 samples that every scenario's metrics go through (stats.Summarize), the engine's own
// benchmark (benchmarks/performance/instructions.yaml).
func init() {
	Register("inferbench/noop", func(context.Context) error { return nil })
	RegisterSetup("inferbench/sha256", func(_ context.Context, p subject.Params) (Func, func(), error) {
		buf := make([]byte, p.Int("bytes", 64<<10))
		for i := range buf {
			buf[i] = byte(i)
		}
		return func(context.Context) error { sha256.Sum256(buf); return nil }, nil, nil
	})
	RegisterSetup("inferbench/summarize", func(_ context.Context, p subject.Params) (Func, func(), error) {
		xs := make([]float64, p.Int("samples", 10000))
		x := uint64(1)
		for i := range xs { // latencies of 1 to 2 ms, the same every run
			x = x*6364136223846793005 + 1442695040888963407
			xs[i] = 1 + float64(x>>11)/(1<<53)
		}
		return func(context.Context) error { _, err := stats.Summarize(xs); return err }, nil, nil
	})
}
