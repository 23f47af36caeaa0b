package compare

import (
	"fmt"
	"slices"

	"github.com/inferbench/inferbench/result"
)

// Wall time against CPU time. A CPU-bound iteration's wall time is its CPU time plus the time it
// waited for a core; on a shared machine (six builds on two cores, a CI runner's neighbours) the
// wait moves by more than the code does: two runs of the same `python3 -c` measured 20.3 and
// 41.9 ms. Its CPU time (cpu_ms: a command's rusage, a Go function's thread clock, a worker
// call's process clock) does not include the wait, and across processes it moved by 0.4% where
// the wall time moved by 16.9% (a SHA-256 function, 12 processes). So where a scenario is
// CPU-bound, cpu_ms gates beside latency_ms, and a latency regression that its CPU time does not
// confirm is the machine's, not the code's (verdict Disagree).

// CPUBoundRatio is the share of an iteration's wall time spent on a CPU from which a scenario
// counts as CPU-bound (cpuShare). A single-threaded computation measures 0.9-1.0 (a Go
// function's thread clock, a Python function's process clock) and a Python command about 0.9
// (its start-up reads files); a sleep, an HTTP call or a GPU wait measures below 0.3. 0.8
// leaves the computation's own page faults and reads their margin. One of the two runs compared
// is enough: a run on a busy machine waited for a core, which lowers its share, and that is the
// case the ratio must not hide.
const CPUBoundRatio = 0.8

// CPUMetric is the per-iteration CPU time (ms) the iteration subjects record beside latency_ms.
const CPUMetric = "cpu_ms"

// cpuShare is the share of scenario s's wall time spent on a CPU: its median cpu_ms over its
// fastest latency_ms, the iteration that waited least for a core. false without samples of both.
//
// Note: the median over the median (0.9 for `python3 -S` on a quiet machine) fell to 0.12-0.41
// for the same command when twenty processes shared the two cores (load average 20): every
// iteration waited, so neither run of a comparison said CPU-bound. Its fastest iteration still
// did (0.43-1.28, most above 0.8), and a sleep's stays near 0.1 however busy the machine.
func cpuShare(s *result.Scenario) (float64, bool) {
	lat, cpu := s.Metrics["latency_ms"].Samples, s.Metrics[CPUMetric].Samples
	if len(lat) < 2 || len(cpu) < 2 {
		return 0, false
	}
	fastest := slices.Min(lat)
	if !(fastest > 0) {
		return 0, false
	}
	return quantile(cpu, 0.5) / fastest, true
}

// cpuBound reports whether a scenario compared in runs old and new is CPU-bound: its cpuShare
// is at least CPUBoundRatio in either run.
func cpuBound(old, new *result.Scenario) bool {
	for _, s := range []*result.Scenario{old, new} {
		if r, ok := cpuShare(s); ok && r >= CPUBoundRatio {
			return true
		}
	}
	return false
}

// medianRow returns the index of the median row of metric name with a test (samples on both
// sides), or -1.
func medianRow(rows []Row, name string) int {
	return slices.IndexFunc(rows, func(r Row) bool { return r.Metric == name && r.OldN >= 2 && r.NewN >= 2 && r.OldCI != nil })
}

// gateCPU makes cpu_ms gate in a CPU-bound scenario whose latency_ms gates (rows are one
// scenario's, compared in o and s), with the noise-aware threshold a gated row gets.
func gateCPU(rows []Row, o, s *result.Scenario, cfg Config) {
	l, c := medianRow(rows, "latency_ms"), medianRow(rows, CPUMetric)
	if l < 0 || c < 0 || !rows[l].Gated || rows[c].Gated || !cpuBound(o, s) {
		return
	}
	rows[c].Gated = true
	rows[c].Threshold = cfg.Thresholds.For(s.Benchmark, CPUMetric)
	noiseThreshold(&rows[c], o, s, cfg)
}

// wallAgainstCPU sets Disagree where the judged rows of one CPU-bound scenario point opposite
// ways: latency_ms a regression that cpu_ms does not confirm (the wait for a core grew: the
// machine moved), or cpu_ms a regression while latency_ms got better (the work moved to other
// threads, or the machine got faster). A row the user gated by name (`gate:`, --gate) keeps its
// verdict: asked for wall time, a wait the code added (a sleep, a lock, I/O) still fails, which
// CPU time cannot tell from a busy machine.
func wallAgainstCPU(rows []Row, o, s *result.Scenario, cfg Config) {
	l, c := medianRow(rows, "latency_ms"), medianRow(rows, CPUMetric)
	if l < 0 || c < 0 || !rows[c].Gated || !cpuBound(o, s) {
		return
	}
	lat, cpu := &rows[l], &rows[c]
	change := func(r *Row) string {
		if !r.Significant {
			return fmt.Sprintf("%s ~ (%+.1f%%, not significant)", r.Metric, r.Delta)
		}
		return fmt.Sprintf("%s %+.1f%%", r.Metric, r.Delta)
	}
	switch {
	case lat.Verdict == Regression && cpu.Verdict != Regression && !cfg.asked(s, "latency_ms"):
		lat.Verdict = Disagree
		lat.Warnings = append(lat.Warnings, fmt.Sprintf("%s: wall time and CPU time disagree (%s, %s): the machine moved, not the code; a wait the code added (sleep, I/O, a lock) reads the same: `--gate latency_ms` fails on wall time alone", lat.ID(), change(lat), change(cpu)))
	case cpu.Verdict == Regression && (lat.Verdict == Better || lat.Verdict == Improvement) && !cfg.asked(s, CPUMetric):
		cpu.Verdict = Disagree
		cpu.Warnings = append(cpu.Warnings, fmt.Sprintf("%s: wall time and CPU time disagree (%s, %s): more CPU time, less wall time (work moved to other threads, or the machine got faster); `--gate cpu_ms` fails on CPU time alone", cpu.ID(), change(lat), change(cpu)))
	}
}
