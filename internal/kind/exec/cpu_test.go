//go:build unix

package exec

import (
	"context"
	"testing"

	"github.com/inferbench/inferbench/subject"
)

// Every call records the command's own CPU time (cpu_ms, from its rusage) beside its wall time:
// a shell loop is CPU time, a sleep is not; the children a shell waits for count; a command that
// reports cpu_ms itself keeps its figure.
func TestCPUTimeOfACommand(t *testing.T) {
	do := func(metrics string, argv ...any) (float64, float64) {
		t.Helper()
		s, err := Open(context.Background(), subject.Spec{Config: &Config{Command: argv, Metrics: metrics}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		o, err := s.Do(context.Background(), subject.Request{Index: 1})
		if err != nil {
			t.Fatal(err)
		}
		cpu, ok := o.Values[CPUTime]
		if !ok {
			t.Fatalf("%v: no %s in %v", argv, CPUTime, o.Values)
		}
		return cpu, float64(o.End.Sub(o.Start)) / 1e6
	}
	// About 0.1-0.3 s of a shell's arithmetic: CPU time, whatever the wait for a core.
	busy := "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"
	if cpu, wall := do("", "sh", "-c", busy); cpu < 20 || cpu > wall*1.05+5 {
		t.Errorf("shell loop: cpu_ms %.1f, wall %.1f ms; want at least 20 ms of CPU time and no more than the wall time", cpu, wall)
	}
	// In a child the shell waits for: the rusage of the reaped command includes it.
	if cpu, wall := do("", "sh", "-c", "sh -c '"+busy+"'; true"); cpu < 20 {
		t.Errorf("shell loop in a child: cpu_ms %.1f (wall %.1f ms); want the child's CPU time counted", cpu, wall)
	}
	if cpu, wall := do("", "sleep", "0.2"); wall < 200 || cpu > 50 {
		t.Errorf("sleep 0.2: cpu_ms %.1f, wall %.1f ms; want a wall time of 200 ms or more and little CPU time", cpu, wall)
	}
	if cpu, _ := do("json", "sh", "-c", `echo '{"cpu_ms": 1234}'`); cpu != 1234 {
		t.Errorf("a command reporting cpu_ms 1234: recorded %v, want its own figure", cpu)
	}
}
