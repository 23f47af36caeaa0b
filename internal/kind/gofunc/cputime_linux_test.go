package gofunc

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/inferbench/inferbench/subject"
)

// Every iteration records its thread's CPU time per call (cpu_ms) beside latency_ms: a hash is
// CPU time, a sleep is not.
func TestCPUTimePerCall(t *testing.T) {
	buf := make([]byte, 1<<20)
	zero := time.Duration(0)
	for _, c := range []struct {
		name string
		fn   Func
		cpu  bool // mostly CPU time
	}{
		{"sha256", func(context.Context) error { sha256.Sum256(buf); return nil }, true},
		{"sleep", func(context.Context) error { time.Sleep(20 * time.Millisecond); return nil }, false},
	} {
		name := fmt.Sprintf("gofunc-cpu-test/%s/%d", c.name, registered.Add(1))
		Register(name, c.fn)
		s, err := Open(context.Background(), subject.Spec{Config: &Config{Func: name, IterationTime: &zero}})
		if err != nil {
			t.Fatal(err)
		}
		o, err := s.Do(context.Background(), subject.Request{Index: 1})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		cpu, ok := float64(o.CPU)/1e6, o.CPU > 0
		wall := float64(o.End.Sub(o.Start)) / 1e6
		switch {
		case !ok:
			t.Errorf("%s: no %s in %v", c.name, CPUTime, o.Values)
		case cpu <= 0 || cpu > wall*1.05+0.1:
			t.Errorf("%s: cpu_ms %.3f, wall %.3f ms: want CPU time above 0 and within the wall time", c.name, cpu, wall)
		case !c.cpu && cpu > wall/4:
			t.Errorf("%s: cpu_ms %.3f of %.3f ms wall: want a sleep's CPU time small", c.name, cpu, wall)
		}
	}
}

// An iteration of one call allocates nothing and reads one clock pair: cpu_ms travels in
// Observation.CPU (before, a map a call: 2 allocations), and the thread clock (two system calls,
// about 1 µs on a VM) is read in one measured iteration of cpuEvery, as many as keep its cost
// within 1% of their time: one in many for a function of nanoseconds, each for one of 200 µs.
func TestSingleCallCost(t *testing.T) {
	zero := time.Duration(0)
	spin := func(d time.Duration) Func {
		return func(context.Context) error {
			for t0 := time.Now(); time.Since(t0) < d; {
			}
			return nil
		}
	}
	for _, c := range []struct {
		name     string
		fn       Func
		min, max int64 // cpuEvery's bounds
	}{
		{"noop", func(context.Context) error { return nil }, 10, 1000},
		{"spin", spin(200 * time.Microsecond), 1, 3},
	} {
		name := fmt.Sprintf("gofunc-cost-test/%s/%d", c.name, registered.Add(1))
		Register(name, c.fn)
		sub, err := Open(context.Background(), subject.Spec{Config: &Config{Func: name, IterationTime: &zero}})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		s := sub.(*Subject)
		var o subject.Observation
		withCPU := 0
		do := func() {
			if o, err = s.Do(context.Background(), subject.Request{Index: 1}); err != nil {
				t.Fatal(err)
			}
			if o.CPU > 0 {
				withCPU++
			}
		}
		s.Do(context.Background(), subject.Request{Warmup: true})
		if allocs := testing.AllocsPerRun(2000, do); allocs != 0 {
			t.Errorf("%s: %.1f allocations an iteration, want 0", c.name, allocs)
		}
		if e := s.every.Load(); e < c.min || e > c.max || o.Values != nil {
			t.Errorf("%s: the CPU clock read one iteration in %d (want %d to %d), values %v", c.name, e, c.min, c.max, o.Values)
		}
		if withCPU == 0 {
			t.Errorf("%s: no iteration of 2,001 has its CPU time", c.name)
		}
	}
}
