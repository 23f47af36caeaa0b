//go:build linux

package monitor

import (
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestProcessSamplerSkipsHarnessCopies: a child between its vfork and its exec runs in the
// harness's memory (issue 22: its RSS was summed into the tree, and `--exec true` read
// inferbench's 72 MB). It is left out until it has exec'd.
func TestProcessSamplerSkipsHarnessCopies(t *testing.T) {
	dir := t.TempDir()
	writeFakeProc(t, dir, 20.0,
		fakeProcess{pid: 100, ppid: 1, start: 1000, rssKB: 1 << 10, hwmKB: 1 << 10, children: map[int][]int{100: {101}}},
		fakeProcess{pid: 101, ppid: 100, start: 3000, rssKB: 70 << 10, hwmKB: 70 << 10},
	)
	s, err := NewProcessSampler(ProcessConfig{Root: dir, PIDs: func() []int { return []int{100} }})
	if err != nil {
		t.Fatal(err)
	}
	execd := false
	s.sharesHarness = func(pid int) bool { return pid == 101 && !execd }
	if err := s.Start(time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	vs, _ := s.Sample(time.Unix(1, 0), nil)
	if got := values(vs); got["rss_mb"] != 1 || got["procs"] != 1 {
		t.Errorf("before the exec: rss_mb %v, procs %v; want 1 MB in 1 process (the harness copy left out)", got["rss_mb"], got["procs"])
	}
	// 101 execs: a 5 MB image of its own.
	writeFakeProc(t, dir, 21.0, fakeProcess{pid: 101, ppid: 100, start: 3000, rssKB: 5 << 10, hwmKB: 5 << 10})
	execd = true
	vs, _ = s.Sample(time.Unix(2, 0), nil)
	if got := values(vs); got["rss_mb"] != 6 || got["procs"] != 2 {
		t.Errorf("after the exec: rss_mb %v, procs %v; want 6 MB in 2 processes", got["rss_mb"], got["procs"])
	}
	tot, _ := s.Stop(time.Unix(3, 0), nil)
	if p := values(tot)["peak_rss_mb"]; p != 6 {
		t.Errorf("peak_rss_mb = %v, want 6 (the harness's 70 MB left out)", p)
	}
}

// TestSharesMemoryWithSelf: kcmp tells a vfork child before its exec from one after.
func TestSharesMemoryWithSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	if !sharesMemoryWithSelf(os.Getpid()) {
		t.Skip("kcmp(2) is not available here")
	}
	c := startChild(t, "hold")
	if sharesMemoryWithSelf(c.cmd.Process.Pid) {
		t.Error("a child that has exec'd reported as sharing the harness's memory")
	}
}

// TestReapedChildOfHarnessMemory: a child the harness starts and reaps during the window has the
// harness's memory as its rusage max RSS (vfork), which made the peak of any subject at least
// inferbench's own. A worker of 1 MB beside a harness holding 200 MB reads far below 200 MB.
func TestReapedChildOfHarnessMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	if os.Getenv("INFERBENCH_MONITOR_FRESH") == "" {
		// The reaped-children figure is a high-water mark of the whole test process.
		cmd := exec.Command(os.Args[0], "-test.run=^TestReapedChildOfHarnessMemory$", "-test.v")
		cmd.Env = append(os.Environ(), "INFERBENCH_MONITOR_FRESH=1")
		out, err := cmd.CombinedOutput()
		t.Logf("fresh test process:\n%s", out)
		if err != nil {
			t.Fatalf("fresh test process: %v", err)
		}
		return
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true")
	}
	// MAP_POPULATE faults the pages in without a loop the race detector would shadow.
	ballast, err := syscall.Mmap(-1, 0, 200<<20, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_ANON|syscall.MAP_PRIVATE|syscall.MAP_POPULATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(ballast)
	c := startChild(t, "hold") // the subject: a small process, waiting
	pid := c.cmd.Process.Pid
	p, _ := NewProcessSampler(ProcessConfig{PIDs: func() []int { return []int{pid} }})
	m := New([]Sampler{p}, WithInterval(time.Hour))
	m.Start()
	if err := exec.Command(truePath).Run(); err != nil { // started and reaped by the harness
		t.Fatal(err)
	}
	r := m.Stop()
	io.WriteString(c.stdin, "go\n")
	peak, _ := r.Get("peak_rss_mb")
	base := rssMB(t, pid)
	t.Logf("subject's RSS %.1f MB, peak_rss_mb %.1f", base, peak.Value)
	if peak.Value >= 100 || math.IsNaN(peak.Value) {
		t.Errorf("peak_rss_mb = %.1f, want the subject's (%.1f MB), not the harness's 200 MB", peak.Value, base)
	}
}
