package result

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/inferbench/inferbench/stats"
)

// TestLargeRunMemory measures the memory Load takes for a large run.json, in a process of its
// own (docs/measurements/reliability.md gives the figure). Skipped unless INFERBENCH_LARGE_RUN names the
// file; INFERBENCH_LARGE_RUN_WRITE=N (scenarios of 5 samples each: 135,000 make 201 MB) writes
// it first, then stops: load it with a second command so that the peak is Load's alone.
//
//	INFERBENCH_LARGE_RUN=/tmp/large.json INFERBENCH_LARGE_RUN_WRITE=135000 go test -run TestLargeRunMemory ./result
//	INFERBENCH_LARGE_RUN=/tmp/large.json go test -run TestLargeRunMemory -v ./result
//
// It fails when the peak resident memory (VmHWM) is 4 times the file's size or more. With
// INFERBENCH_LARGE_RUN_WHOLE=1 it measures the file read whole and then decoded, as Load did
// before it streamed.
func TestLargeRunMemory(t *testing.T) {
	path := os.Getenv("INFERBENCH_LARGE_RUN")
	if path == "" {
		t.Skip("INFERBENCH_LARGE_RUN is not set: a measurement, not a test")
	}
	if n, _ := strconv.Atoi(os.Getenv("INFERBENCH_LARGE_RUN_WRITE")); n > 0 {
		writeLargeRun(t, path, n)
		return
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	before := vmHWM(t)
	start := time.Now()
	load := Load
	if os.Getenv("INFERBENCH_LARGE_RUN_WHOLE") != "" { // the file read whole, then decoded
		load = func(path string) (*Run, error) {
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			return Decode(data, path)
		}
	}
	r, err := load(path)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	peak := vmHWM(t)
	runtime.KeepAlive(r)
	ratio := float64(peak) / float64(fi.Size())
	t.Logf("%s: %d MB, %d scenarios, loaded in %v; peak RSS %d MB (%d MB before), %.2f times the file", path, fi.Size()>>20, len(r.Scenarios), took.Round(time.Millisecond), peak>>20, before>>20, ratio)
	if ratio >= 4 {
		t.Errorf("peak RSS %.2f times the file's size, want under 4", ratio)
	}
}

// vmHWM is the process's peak resident memory in bytes (Linux).
func vmHWM(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status: Linux only")
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(l); len(f) >= 2 && string(f[0]) == "VmHWM:" {
			kb, _ := strconv.ParseInt(string(f[1]), 10, 64)
			return kb << 10
		}
	}
	t.Skip("no VmHWM")
	return 0
}

// writeLargeRun writes a run of n scenarios of 5 latency samples each to path.
func writeLargeRun(t *testing.T, path string, n int) {
	rng := rand.New(rand.NewPCG(1, 1))
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	r := &Run{Schema: Schema, ID: "large", StartedAt: t0, FinishedAt: t0.Add(time.Hour), Environment: map[string]any{"hostname": "node-0"}}
	for i := range n {
		xs := make([]float64, 5)
		for j := range xs {
			xs[j] = 5 + rng.ExpFloat64()
		}
		s, _ := stats.Summarize(xs)
		lat := NewMetric("latency_ms")
		lat.Summary, lat.Samples = &s, xs
		tp, mem := 1000/s.Median, 2048.0
		r.Scenarios = append(r.Scenarios, Scenario{Benchmark: fmt.Sprint("model-", i/64), Scenario: fmt.Sprintf("batch_size=%d,dtype=fp16", i%64), Subject: "worker", Status: StatusOK,
			StartedAt: t0, DurationS: 3, Iterations: Iterations{Warmup: 10, Measured: 100},
			Metrics: map[string]Metric{"latency_ms": lat, "throughput_ips": {Unit: "items/s", Better: "higher", Value: &tp}, "memory_mb": {Unit: "MB", Better: "lower", Value: &mem}}})
	}
	r.Tally()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	if err := WriteJSON(w, r); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
