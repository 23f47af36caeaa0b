package result

import (
	"strings"
	"testing"
	"time"
)

// TestImportsRejectImpossibleValues checks that a NaN, infinite, negative or absurd value in an
// imported file is an error naming the file and the benchmark, not a sample averaged into a summary.
func TestImportsRejectImpossibleValues(t *testing.T) {
	at := time.Unix(0, 0)
	gobench := func(src string) error {
		_, err := readGoBench(strings.NewReader(src), "bench.txt", "r1", at)
		return err
	}
	pytest := func(src string) error {
		_, err := readPytestBenchmark(strings.NewReader(src), "pytest.json", "r1")
		return err
	}
	hyperfine := func(src string) error {
		_, err := readHyperfine(strings.NewReader(src), "hf.json", "r1", "cmds", at)
		return err
	}
	for _, tc := range []struct {
		name string
		read func(string) error
		src  string
		want string // "" when the file is fine
	}{
		// A valid go test -bench line.
		{"gobench-ok", gobench, "BenchmarkA-8 100 12 ns/op\nBenchmarkA-8 100 13 ns/op\n", ""},
		// NaN: benchfmt parses it, and a summary of it is NaN.
		{"gobench-nan", gobench, "BenchmarkA-8 100 NaN ns/op\nBenchmarkA-8 100 13 ns/op\n", "bench.txt: BenchmarkA/default: sample 1: latency_ms = NaN is not a finite number"},
		// +Inf bytes per op.
		{"gobench-inf", gobench, "BenchmarkA-8 100 12 ns/op 1 B/op\nBenchmarkA-8 100 13 ns/op +Inf B/op\n", "memory_bytes_per_op = +Inf"},
		// A negative time.
		{"gobench-negative", gobench, "BenchmarkA-8 100 -5 ns/op\n", "latency_ms = -5e-06: a value in ms cannot be negative"},
		// A custom unit without a catalogue entry may be negative.
		{"gobench-custom-negative", gobench, "BenchmarkA-8 100 12 ns/op -3 delta\n", ""},
		// pytest-benchmark rounds with a negative time.
		{"pytest-negative-data", pytest, `{"benchmarks":[{"name":"test_a","fullname":"t.py::test_a","stats":{"rounds":2,"mean":1,"data":[0.001,-0.002]}}]}`, "pytest.json: t.py::test_a: sample 2: latency_ms = -2"},
		// A summary-only pytest-benchmark entry with a negative mean.
		{"pytest-negative-mean", pytest, `{"benchmarks":[{"name":"test_a","fullname":"t.py::test_a","stats":{"rounds":5,"mean":-1,"min":0.001,"max":0.002,"median":0.001}}]}`, "latency_ms = -1000"},
		// Negative rounds.
		{"pytest-negative-rounds", pytest, `{"benchmarks":[{"name":"test_a","fullname":"t.py::test_a","stats":{"rounds":-5,"mean":0.001}}]}`, "rounds = -5"},
		// A valid pytest-benchmark entry.
		{"pytest-ok", pytest, `{"benchmarks":[{"name":"test_a","fullname":"t.py::test_a","stats":{"rounds":2,"mean":0.001,"data":[0.001,0.002]}}]}`, ""},
		// hyperfine with a negative run time.
		{"hyperfine-negative", hyperfine, `{"results":[{"command":"sleep 0","mean":0.1,"times":[0.1,-0.2]}]}`, `hf.json: command "sleep 0": sample 2: latency_ms = -200`},
		// hyperfine with a run time of thousands of years.
		{"hyperfine-absurd", hyperfine, `{"results":[{"command":"sleep 0","mean":1e12,"times":[1e12,1e12]}]}`, "not a plausible time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.read(tc.src)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("read: error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// A metric that is a change over a window may be negative (memory released during the run);
// an amount in the same unit may not. Before, rss_growth_mb < 0 made a real run.json "corrupt".
func TestSignedMetricsMayBeNegative(t *testing.T) {
	for name, ok := range map[string]bool{
		"rss_growth_mb":     true,
		"gpu_mem_growth_mb": true, // not catalogued: its name says it is a change
		"latency_delta_ms":  true,
		"peak_rss_mb":       false,
		"latency_ms":        false,
		// A difference of percentages or times (seed 003's overhead through noise) may be
		// negative; a share of something may not. Failed before for the overhead ones.
		"overhead_percent":           true,
		"Overhead_Percent":           true,
		"tracking_overhead_ms":       true,
		"accuracy_change_percent":    true,
		"energy_saving_pct":          true,
		"cpu_pct":                    false,
		"gpu_util_pct":               false,
		"memory_utilization_percent": false,
		"error_rate":                 false,
		"success_rate":               false,
	} {
		err := CheckValue(name, -2.5)
		if (err == nil) != ok {
			t.Errorf("CheckValue(%s, -2.5) = %v, want ok=%v", name, err, ok)
		}
	}
}
