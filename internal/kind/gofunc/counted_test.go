package gofunc

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/callgrind"
	"github.com/inferbench/inferbench/internal/testkit/require"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// TestMain serves the hidden mode: instruction mode runs this test binary again under callgrind
// to count a function registered here.
func TestMain(m *testing.M) {
	if served, err := ServeCounted(context.Background(), os.Getenv); served {
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func init() {
	// SHA-256 of `bytes` bytes: a fixed CPU load, made 1% heavier with 1.01 times the bytes. It
	// fails while the allocation profiler is on: the profiler samples an allocation in about 512
	// KiB at random and walks its stack, and some calls of stats.Summarize (an 80 KB copy)
	// counted 30,000 instructions (1%) more than others, enough to move a median of 5 calls
	// (make gate-instructions failed CI at +0.70%).
	RegisterSetup("test/counted-sha", func(_ context.Context, p subject.Params) (Func, func(), error) {
		buf := make([]byte, p.Int("bytes", 1<<16))
		return func(context.Context) error {
			if runtime.MemProfileRate != 0 {
				return fmt.Errorf("the allocation profiler samples one allocation in %d bytes", runtime.MemProfileRate)
			}
			sha256.Sum256(buf)
			return nil
		}, nil, nil
	})
	// A function that panics on its second call (the first is the warm-up).
	var calls int
	Register("test/counted-panic", func(context.Context) error {
		if calls++; calls == 2 {
			panic("boom in the counted call")
		}
		return nil
	})
	// A function whose goroutine panics: not recoverable, the process ends.
	Register("test/counted-goroutine-panic", func(context.Context) error {
		done := make(chan struct{})
		go func() { defer close(done); panic("boom in a goroutine") }()
		<-done
		return nil
	})
	// A setup that panics.
	RegisterSetup("test/counted-setup-panic", func(context.Context, subject.Params) (Func, func(), error) {
		panic("boom in the setup")
	})
}

// counted opens the test function in instruction mode and returns the counts of n measured
// calls after one warm-up call.
func counted(t *testing.T, bytes, n int, keep string) ([]float64, subject.Subject) {
	t.Helper()
	s, err := Open(context.Background(), subject.Spec{
		Config: &Config{Func: "test/counted-sha"}, Params: subject.Params{"bytes": bytes},
		Measure: subject.MeasureInstructions, ProfileDir: keep,
	})
	if err != nil {
		t.Error(err)
		return nil, nil
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	var counts []float64
	for i := range n + 1 {
		o, err := s.Do(context.Background(), subject.Request{Index: i, Warmup: i == 0})
		if err != nil {
			t.Error(err)
			return nil, nil
		}
		if i > 0 {
			counts = append(counts, o.Values[callgrind.Instructions])
		}
	}
	return counts, s
}

// A Go function's count is the same call after call and run after run, and a 1% heavier
// function is a regression of the comparison's gate (instructions, with its own threshold).
func TestCountedFunction(t *testing.T) {
	if err := callgrind.Supported(); err != nil {
		t.Skip(err)
	}
	if _, err := callgrind.Find(); err != nil {
		require.Skipf(t, require.Valgrind, "%v", err)
	}
	keep := filepath.Join(t.TempDir(), "profiles", "f")
	// Three processes side by side: valgrind's start-up is most of the time.
	var base, again, heavier []float64
	var s subject.Subject
	var wg sync.WaitGroup
	wg.Go(func() { base, s = counted(t, 1<<16, 4, keep) })
	wg.Go(func() { again, _ = counted(t, 1<<16, 4, "") })
	wg.Go(func() { heavier, _ = counted(t, 1<<16*101/100, 4, "") })
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, c := range [][]float64{base, again} {
		for _, n := range c {
			// Under the race detector its runtime's bookkeeping varies by a few hundred
			// instructions a call, once 2,619 (0.13%, a loaded machine); without it the count
			// is exact.
			if d := n/base[0] - 1; d != 0 && (!raceEnabled || d > 3e-3 || d < -3e-3) {
				t.Fatalf("unchanged function counted %v and %v: want the same count", base, again)
			}
		}
	}
	// SHA-256 of 64 KiB is about two million instructions: the window holds the call, not the
	// process.
	if base[0] < 1e6 || base[0] > 3e6 {
		t.Errorf("SHA-256 of 64 KiB counted %v instructions, want about 2 million", base[0])
	}
	if d := heavier[0]/base[0] - 1; d < 0.009 || d > 0.011 {
		t.Errorf("1%% more bytes counted %+.3f%% more instructions, want about +1%%", 100*d)
	}
	run := func(c []float64, id string) *result.Run {
		return &result.Run{ID: id, Scenarios: []result.Scenario{{
			Benchmark: "sha", Scenario: "default", Subject: "gofunc", Status: result.StatusOK,
			Counted: s.(subject.Counter).Identity(),
			Metrics: map[string]result.Metric{callgrind.Instructions: {
				Unit: "count", Better: "lower", Samples: c,
			}},
		}}}
	}
	if rep := compare.Runs(run(base, "a"), run(again, "b"), compare.Config{}); rep.Failed() {
		t.Errorf("unchanged function failed the comparison: %+v", rep.Rows)
	}
	rep := compare.Runs(run(base, "a"), run(heavier, "c"), compare.Config{})
	if !rep.Failed() || rep.Regressions != 1 {
		t.Errorf("1%% heavier function: %d regressions (rows %+v), want the instructions row to fail", rep.Regressions, rep.Rows)
	}
	kept := s.(subject.Counter).Kept()
	if len(kept) != 1 || kept[0] != filepath.Join(keep, "callgrind.out") {
		t.Fatalf("kept %q, want %s", kept, filepath.Join(keep, "callgrind.out"))
	}
	// The kept file is the first measured call's costs (go test strips the binary's symbols:
	// function names show in a built binary's file, not here).
	if c, err := callgrind.ReadFile(kept[0]); err != nil || float64(c.Instructions()) != base[0] {
		t.Errorf("the kept callgrind file counts %d (%v), want the call's %v", c.Instructions(), err, base[0])
	}
	if id := s.(subject.Counter).Identity(); id["go"] == "" || id["valgrind"] == "" {
		t.Errorf("identity %v lacks Go's or valgrind's version", id)
	}
}

// A function that panics in instruction mode reports its panic, as time mode does ("panic:
// VALUE"), and every later call fails with it; a panic in a goroutine it started, which ends the
// process, is named from the process's stderr; a setup that panics fails the open with it.
// Before, the process died and the error said it "ended (EOF)" and that the binary must call
// inferbench.Main, which it does.
func TestCountedPanic(t *testing.T) {
	if err := callgrind.Supported(); err != nil {
		t.Skip(err)
	}
	if _, err := callgrind.Find(); err != nil {
		require.Skipf(t, require.Valgrind, "%v", err)
	}
	s, err := Open(context.Background(), subject.Spec{Config: &Config{Func: "test/counted-panic"}, Measure: subject.MeasureInstructions})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Do(context.Background(), subject.Request{Warmup: true}); err != nil {
		t.Fatalf("warm-up call: %v", err)
	}
	for i := range 2 {
		_, err := s.Do(context.Background(), subject.Request{Index: 1 + i})
		if err == nil || err.Error() != "panic: boom in the counted call" {
			t.Errorf("call %d after the panic: %v, want panic: boom in the counted call", i+1, err)
		}
	}
	g, err := Open(context.Background(), subject.Spec{Config: &Config{Func: "test/counted-goroutine-panic"}, Measure: subject.MeasureInstructions})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.Do(context.Background(), subject.Request{Index: 1}); err == nil || !strings.HasPrefix(err.Error(), "panic: boom in a goroutine (the process counting") || strings.Contains(err.Error(), "inferbench.Main") {
		t.Errorf("a goroutine's panic: %v, want its panic", err)
	}
	_, err = Open(context.Background(), subject.Spec{Config: &Config{Func: "test/counted-setup-panic"}, Measure: subject.MeasureInstructions})
	if err == nil || !strings.Contains(err.Error(), "setup test/counted-setup-panic: panic: boom in the setup") || strings.Contains(err.Error(), "inferbench.Main") {
		t.Errorf("a setup that panics: %v, want its panic", err)
	}
}
