package run

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/result"
)

// TestSequentialWorkerUnderConcurrency: a worker process under a concurrency load of 4 runs one
// call at a time. The warning said "latency includes the wait", but the worker times each call
// itself (p50 1.09 ms for a 1 ms sleep with 4 in flight): latency is a call's own time, and
// throughput that of one call after another. Checked here end to end: latency × throughput is
// about 1 call in flight (it would be about 4 if latency held the wait).
func TestSequentialWorkerUnderConcurrency(t *testing.T) {
	py := pyenv.Find(nil).Path
	if _, err := exec.LookPath(py); err != nil {
		t.Skipf("%s is not installed: worker processes cannot run", py)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "benches", "seq.yaml"), `name: seq
subject: {kind: worker, adapter: noop}
params: {sleep_ms: 5}
load: {mode: concurrency, concurrency: 4, warmup_iterations: 4, measurement_iterations: 40}
`)
	r, _, console := runProject(t, dir)
	s := r.Scenarios[0]
	if s.Status != result.StatusOK {
		t.Fatalf("status %s: %s\n%s", s.Status, s.Error, console)
	}
	warn := strings.Join(s.Warnings, "\n")
	for _, want := range []string{"one worker process runs one call at a time", "latency is each call's own time, without that wait", "throughput is that of calls made one after another"} {
		if !strings.Contains(warn, want) {
			t.Errorf("warnings %q do not say %q", s.Warnings, want)
		}
	}
	lat, thr := s.Metrics["latency_ms"], s.Metrics["throughput_ips"]
	if lat.Summary == nil || thr.Value == nil {
		t.Fatalf("no latency or throughput: %+v %+v", lat, thr)
	}
	// Little's law: calls in flight = throughput × time per call.
	inFlight := *thr.Value * lat.Summary.Median / 1000
	t.Logf("throughput %.1f/s, latency p50 %.2f ms: %.2f calls in flight", *thr.Value, lat.Summary.Median, inFlight)
	if inFlight < 0.3 || inFlight > 2 {
		t.Errorf("throughput %.1f/s × latency p50 %.2f ms = %.2f calls in flight; one at a time with the worker's own timing is about 1",
			*thr.Value, lat.Summary.Median, inFlight)
	}
}
