package monitor

import (
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// The sampling cost at a period P is (time per Sample) / P of one core: at 100 ms, 1 ms per
// sample would be 1%. See docs/performance.md, section Monitoring.

func benchSampler(b *testing.B, s Sampler) {
	b.Helper()
	if st, ok := s.(Starter); ok {
		st.Start(time.Now())
	}
	var buf []Value
	b.ReportAllocs()
	b.ResetTimer()
	// CPU time of the sampling thread, not wall time: on a busy machine the wall clock counts
	// the time other processes held the core.
	cpu, _ := costClock(func() {
		for i := 0; i < b.N; i++ {
			buf, _ = s.Sample(time.Now(), buf[:0])
		}
	})
	b.StopTimer()
	perSample := cpu.Seconds() / float64(b.N)
	b.ReportMetric(perSample*1e6, "cpu-µs/sample")
	b.ReportMetric(100*perSample/DefaultInterval.Seconds(), "%core@100ms")
}

func BenchmarkProcessSampleSelf(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("Linux only")
	}
	s, err := NewProcessSampler(ProcessConfig{})
	if err != nil {
		b.Fatal(err)
	}
	benchSampler(b, s)
}

// BenchmarkProcessSampleTree samples the harness with 8 child processes.
func BenchmarkProcessSampleTree(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("Linux only")
	}
	if _, err := exec.LookPath("sleep"); err != nil {
		b.Skip("no sleep command")
	}
	for i := 0; i < 8; i++ {
		c := exec.Command("sleep", "60")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { c.Process.Kill(); c.Wait() }()
	}
	s, _ := NewProcessSampler(ProcessConfig{})
	benchSampler(b, s)
}

func BenchmarkSystemSample(b *testing.B) {
	s, err := NewSystemSampler("")
	if err != nil {
		b.Skip(err)
	}
	s.Period = 0 // the cost of one reading; it reads once a second by default
	benchSampler(b, s)
}

func BenchmarkRAPLSample(b *testing.B) {
	s, err := NewRAPLSampler("")
	if err != nil {
		b.Skip(err)
	}
	benchSampler(b, s)
}

// BenchmarkMonitorIdleCPU runs the standard samplers at 100 ms for 3 s of wall time per
// iteration, the harness itself as the process tree, and reports the CPU the whole test process
// used meanwhile (getrusage), as percent of one core: an upper bound of the monitor's overhead, Go
// runtime included; and the sampling thread's own CPU (sampling-%core).
func BenchmarkMonitorIdleCPU(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("Linux only")
	}
	src := Open(b.Context(), Config{})
	defer src.Close()
	var cpu, wall, cost float64
	for i := 0; i < b.N; i++ {
		c0, t0 := selfCPU(), time.Now()
		m := src.Monitor(nil)
		m.Start()
		time.Sleep(3 * time.Second)
		r := m.Stop()
		cpu += selfCPU() - c0
		wall += time.Since(t0).Seconds()
		cost += r.CostPct
		if r.Samples < 25 {
			b.Fatalf("%d samples in 3 s at 100 ms", r.Samples)
		}
	}
	b.ReportMetric(100*cpu/wall, "%core")
	b.ReportMetric(cost/float64(b.N), "sampling-%core")
}

// BenchmarkProcessSampleTreeScan is BenchmarkProcessSampleTree finding descendants by listing
// /proc instead of reading children files.
func BenchmarkProcessSampleTreeScan(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("Linux only")
	}
	for i := 0; i < 8; i++ {
		c := exec.Command("sleep", "60")
		if err := c.Start(); err != nil {
			b.Skip(err)
		}
		defer func() { c.Process.Kill(); c.Wait() }()
	}
	s, _ := NewProcessSampler(ProcessConfig{})
	s.scanAll = true
	benchSampler(b, s)
}

// BenchmarkProcessSampleWorker samples one process with 40 threads, like a PyTorch worker.
func BenchmarkProcessSampleWorker(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("Linux only")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("no python3 for a many-threaded process")
	}
	c := exec.Command(py, "-c", "import threading, time\n"+
		"for _ in range(40): threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"+
		"print('ready', flush=True); time.sleep(60)")
	out, _ := c.StdoutPipe()
	if err := c.Start(); err != nil {
		b.Skip(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil {
		b.Fatal(err)
	}
	s, _ := NewProcessSampler(ProcessConfig{PIDs: func() []int { return []int{c.Process.Pid} }})
	benchSampler(b, s)
}
