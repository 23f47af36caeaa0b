//go:build linux

package exec

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/inferbench/inferbench/subject"
)

// The test binary doubles as the command that holds memory: with INFERBENCH_TEST_HOLD_MB set it
// allocates that many MB, touches every page, and exits.
func TestMain(m *testing.M) {
	if n := os.Getenv("INFERBENCH_TEST_HOLD_MB"); n != "" {
		holdAndExit(n)
	}
	os.Exit(m.Run())
}

var held []byte

func holdAndExit(n string) {
	mb := 0
	for _, c := range n {
		mb = mb*10 + int(c-'0')
	}
	held = make([]byte, mb<<20)
	for i := 0; i < len(held); i += 4096 {
		held[i] = 1
	}
	runtime.KeepAlive(held)
	// Its own account of its peak, to hold the harness's figure to.
	fmt.Printf("{\"own_hwm_mb\": %v}\n", vmHWM(os.Getpid())/(1<<20))
	os.Exit(0)
}

// peakOf runs argv once as an exec subject and returns what it observed.
func peakOf(t *testing.T, env []string, metrics string, argv ...any) map[string]float64 {
	t.Helper()
	s, err := Open(context.Background(), subject.Spec{Config: &Config{Command: argv, Metrics: metrics}, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	o, err := s.Do(context.Background(), subject.Request{})
	if err != nil {
		t.Fatal(err)
	}
	return o.Values
}

// TestPeakRSSIsTheCommands checks that a command's peak RSS is its own: `true` started from a
// process holding 200 MB reads under 5 MB (its rusage max RSS reads the 200 MB: Go starts
// commands with vfork, and exec records the parent's memory as the child's), and a process
// holding 300 MB reads 300 ± 10 MB.
func TestPeakRSSIsTheCommands(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the command's own peak RSS is measured on Linux")
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true")
	}
	ballast := make([]byte, 200<<20)
	for i := 0; i < len(ballast); i += 4096 {
		ballast[i] = 1
	}
	defer runtime.KeepAlive(ballast)

	v, ok := peakOf(t, nil, "", truePath)[PeakRSS]
	if !ok || v <= 0 || v >= 5 {
		t.Errorf("true: peak_rss_mb = %v (reported %v), want under 5 MB", v, ok)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	vals := peakOf(t, append(os.Environ(), "INFERBENCH_TEST_HOLD_MB=300"), "json", self)
	v, ok = vals[PeakRSS]
	own := vals["own_hwm_mb"]
	if !ok || math.Abs(v-own) > 1 {
		t.Errorf("a process holding 300 MB: peak_rss_mb = %v (reported %v), its own VmHWM %v MB", v, ok, own)
	}
	// The race detector's shadow memory doubles the holder's memory.
	if !raceEnabled && (v < 300 || v > 310) {
		t.Errorf("a process holding 300 MB: peak_rss_mb = %v, want 300 ± 10", v)
	}
}
