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
	t.Logf("true beside 200 MB: peak_rss_mb %.2f", v)
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
	t.Logf("a process holding 300 MB: peak_rss_mb %.2f, its own VmHWM %.2f", v, own)
	if !ok || math.Abs(v-own) > 1 {
		t.Errorf("a process holding 300 MB: peak_rss_mb = %v (reported %v), its own VmHWM %v MB", v, ok, own)
	}
	// The race detector's shadow memory doubles the holder's memory.
	if !raceEnabled && (v < 300 || v > 310) {
		t.Errorf("a process holding 300 MB: peak_rss_mb = %v, want 300 ± 10", v)
	}
}

// TestPeakRSSOfAShellsChild checks that a command's children count: a shell that runs a
// process holding 300 MB and then exits itself reads at least 300 MB (the shell's own mark at its
// exit is about 1 MB).
func TestPeakRSSOfAShellsChild(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// "; true" keeps the shell from replacing itself with the child (exec of the last command).
	vals := peakOf(t, append(os.Environ(), "INFERBENCH_TEST_HOLD_MB=300"), "", "sh", "-c", `"$0" >/dev/null; true`, self)
	if v := vals[PeakRSS]; v < 300 {
		t.Errorf("a shell whose child held 300 MB: peak_rss_mb = %v, want 300 or more", v)
	}
}

// TestSetIDCommandUntraced: a set-user-ID program would lose its privileges if traced, so a
// command that is one runs untraced.
func TestSetIDCommandUntraced(t *testing.T) {
	var path string
	for _, p := range []string{"/usr/bin/passwd", "/usr/bin/su", "/bin/su", "/usr/bin/newgrp", "/usr/bin/chsh", "/usr/bin/sudo"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&os.ModeSetuid != 0 {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("no set-user-ID program found")
	}
	s, err := Open(context.Background(), subject.Spec{Config: &Config{Command: []any{path, "--help"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !s.(*Command).setID {
		t.Errorf("%s: not marked set-user-ID, would run traced", path)
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true")
	}
	s, err = Open(context.Background(), subject.Spec{Config: &Config{Command: []any{truePath}}})
	if err != nil {
		t.Fatal(err)
	}
	if s.(*Command).setID {
		t.Errorf("%s: marked set-user-ID", truePath)
	}
}

// TestOnlyWarmupCallsTraced: tracing costs a call two stops of the command, so measured calls
// run untraced (the warm-up calls and the very first call are traced), and report the traced
// calls' peak.
func TestOnlyWarmupCallsTraced(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	s, err := Open(context.Background(), subject.Spec{Config: &Config{
		Command: []any{"sh", "-c", `echo "{\"tracer\": $(sed -n 's/^TracerPid:[[:space:]]*//p' /proc/$$/status)}"`},
		Metrics: "json",
	}})
	if err != nil {
		t.Fatal(err)
	}
	var tracedPeak float64
	for _, tc := range []struct {
		r      subject.Request
		traced bool
	}{
		{subject.Request{Index: 0}, true},               // the first call, warm-up or not
		{subject.Request{Index: 1, Warmup: true}, true}, // a warm-up call
		{subject.Request{Index: 2}, false},              // a measured call
	} {
		o, err := s.Do(context.Background(), tc.r)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.Values["tracer"] > 0; got != tc.traced {
			t.Errorf("call %+v: traced %v, want %v", tc.r, got, tc.traced)
		}
		if tc.traced {
			tracedPeak = max(tracedPeak, o.Values[PeakRSS])
		} else if o.Values[PeakRSS] != tracedPeak || tracedPeak == 0 {
			t.Errorf("measured call: peak_rss_mb %v, want the traced calls' %v", o.Values[PeakRSS], tracedPeak)
		}
	}
}
