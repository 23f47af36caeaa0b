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
		cpu, ok := o.Values[CPUTime]
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
