package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// TestTableMemoryColumn: the console's summary has a MEMORY MB column, the subject's own
// memory_mb when it reports one (seed 001 prints memory), else the measured peak_rss_mb. Before,
// the console showed no memory at all.
func TestTableMemoryColumn(t *testing.T) {
	mem, rss := 512.0, 48.5
	r := &result.Run{Scenarios: []result.Scenario{
		{Benchmark: "own", Scenario: "default", Status: result.StatusOK, Metrics: map[string]result.Metric{"memory_mb": {Unit: "MB", Value: &mem}, "peak_rss_mb": {Unit: "MB", Value: &rss}}},
		{Benchmark: "cmd", Scenario: "default", Status: result.StatusOK, Metrics: map[string]result.Metric{"peak_rss_mb": {Unit: "MB", Value: &rss}}},
	}}
	var b bytes.Buffer
	if err := Table(&b, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[0], "MEMORY MB") {
		t.Fatalf("no MEMORY MB column:\n%s", b.String())
	}
	if f := strings.Fields(lines[1]); f[len(f)-1] != "512.0" {
		t.Errorf("own: %q, want its memory_mb 512.0", lines[1])
	}
	if f := strings.Fields(lines[2]); f[len(f)-1] != "48.50" {
		t.Errorf("cmd: %q, want its peak_rss_mb 48.50", lines[2])
	}
}

// TestStartupNote: a command that reports its own latency_ms far below its process round trip
// gets a note that its throughput counts the process's start-up (the command example: p50 0.36
// ms beside 4.8 items/s, said nowhere before).
func TestStartupNote(t *testing.T) {
	own, trip := stats.Summary{N: 5, Median: 0.36}, stats.Summary{N: 5, Median: 208}
	tp := 4.8
	r := &result.Run{Scenarios: []result.Scenario{{Benchmark: "cmd", Scenario: "default", Status: result.StatusOK, Metrics: map[string]result.Metric{
		"latency_ms": {Summary: &own}, "harness_latency_ms": {Summary: &trip}, "throughput_ips": {Value: &tp}}}}}
	notes := strings.Join(notesOf(r), "\n")
	if !strings.Contains(notes, "note    cmd/default: expected: throughput counts each process's start-up") || !strings.Contains(notes, "p50 208.0 ms") {
		t.Errorf("notes: %q", notes)
	}
}

// TestUnmeasuredSaid: what the monitors could not measure on this machine (energy without RAPL,
// no GPU) is said once on the console and in report.html. Before, it was only in run.json.
func TestUnmeasuredSaid(t *testing.T) {
	res := &result.Resources{Unavailable: []string{"rapl: not available: no powercap zones", "gpu: not available: nvml: init: ERROR_LIBRARY_NOT_FOUND\nnvidia-smi: not found in PATH"}}
	r := testRun(1, 20)
	for i := range r.Scenarios {
		r.Scenarios[i].Extra.Resources = res
	}
	notes := strings.Join(notesOf(r), "\n")
	for _, want := range []string{"note    unmeasured on this machine: energy (RAPL counters): not available: no powercap zones",
		"note    unmeasured on this machine: GPU: not available: nvml: init: ERROR_LIBRARY_NOT_FOUND nvidia-smi: not found in PATH"} {
		if strings.Count(notes, want) != 1 {
			t.Errorf("console notes lack (once) %q:\n%s", want, notes)
		}
	}
	var b bytes.Buffer
	if err := RunHTML(&b, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "unmeasured on this machine") || !strings.Contains(b.String(), "energy (RAPL counters): not available") {
		t.Errorf("report.html does not say what was not measured")
	}
}
