package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The commands users of each seed type, walked again (issue 33): each case failed before.

// TestListNamedFolder: `cd benches && inferbench list .` (and `run .`) lists what the project
// lists there, as `../benches` and an absolute path do; so do "." inside seed 003's benchmarks/
// and seed 000's benchmarks/unit/. Naming benchmarks does not make seed 003's helper
// config.run_everything a benchmark. Before: "no benchmark found … name the folder or file"
// (exit 2), and config.run_everything listed.
func TestListNamedFolder(t *testing.T) {
	for _, tc := range []struct {
		seed, cwd string
		args      []string
		want      []string // benchmarks listed
		not       []string // never listed
	}{
		{"004", "benches", []string{"."}, []string{"llama-variants", "mock_benchmark.MockBenchmark"}, []string{"llama_benchmark.LlamaBenchmark"}},
		{"004", "benches", []string{"../benches"}, []string{"llama-variants", "mock_benchmark.MockBenchmark"}, []string{"llama_benchmark.LlamaBenchmark"}},
		{"003", "benchmarks", []string{"."}, []string{"test_overhead.benchmark_training_overhead"}, []string{"config.", "profile_memory."}},
		{"003", "benchmarks", nil, []string{"test_overhead.benchmark_training_overhead"}, []string{"config.", "profile_memory."}},
		{"003", "", []string{"benchmarks"}, []string{"test_overhead.benchmark_training_overhead"}, []string{"config.", "profile_memory."}},
		{"000", "benchmarks/unit", []string{"."}, []string{"basic.run_basic_performance_benchmark"}, []string{"scalability."}},
	} {
		dir := seedProject(t, tc.seed)
		if err := os.WriteFile(filepath.Join(dir, "benchmarks", "config.py"), []byte("def run_everything():\n    pass\n"), 0o644); err != nil && tc.seed == "003" {
			t.Fatal(err)
		}
		for _, cmd := range []string{"list", "validate"} {
			out, errOut := seedRun(t, filepath.Join(dir, tc.cwd), 0, append([]string{cmd}, tc.args...)...)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("seed %s, in %q: %s %v does not list %s:\n%s%s", tc.seed, tc.cwd, cmd, tc.args, w, out, errOut)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("seed %s, in %q: %s %v lists %s:\n%s", tc.seed, tc.cwd, cmd, tc.args, n, out)
				}
			}
		}
	}
	// run . from inside benches/ runs the definitions there.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "benches"), 0o755)
	os.WriteFile(filepath.Join(dir, "benches", "a.yaml"), []byte("name: a\nsubject: {kind: exec, command: [true]}\nload: {warmup_iterations: 0, measurement_iterations: 1}\n"), 0o644)
	out, errOut := seedRun(t, filepath.Join(dir, "benches"), 0, "run", ".", "--no-monitor", "--no-store", "--output-dir", "../out")
	if !strings.Contains(out, "a/default") {
		t.Errorf("run . in benches/ did not run a/default:\n%s%s", out, errOut)
	}
}

// TestFlatYAMLNamed: a YAML file directly in a flat benchmarks/ folder (beside seed 003's
// test_*.py) is not a definition there, and list, validate and run say so, naming the file and
// how to have it read. Before, it was passed over silently.
func TestFlatYAMLNamed(t *testing.T) {
	dir := seedProject(t, "003")
	os.WriteFile(filepath.Join(dir, "benchmarks", "extra.yaml"), []byte("name: extra\nsubject: {kind: mock}\n"), 0o644)
	for _, cmd := range []string{"list", "validate"} {
		_, errOut := seedRun(t, dir, 0, cmd)
		if !strings.Contains(errOut, "note: "+filepath.Join("benchmarks", "extra.yaml")+" is not read") || !strings.Contains(errOut, "benchmarks/{unit,integration,performance}/") {
			t.Errorf("%s: stderr does not name the unread benchmarks/extra.yaml:\n%s", cmd, errOut)
		}
	}
	// Named, it is read.
	out, _ := seedRun(t, dir, 0, "list", "benchmarks/extra.yaml", "--enable-mock")
	if !strings.Contains(out, "extra") {
		t.Errorf("list benchmarks/extra.yaml:\n%s", out)
	}
}

// TestSystemExitKeepsMessage: a benchmark function that stops with SystemExit("message") fails
// with its message (and report.html's failure list keeps the traceback's lines). Before: "exited
// during run (exit status 1)", the message lost.
func TestSystemExitKeepsMessage(t *testing.T) {
	seedPython(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "benches"), 0o755)
	os.WriteFile(filepath.Join(dir, "benches", "ex.py"), []byte("def run_exits():\n    raise SystemExit(\"model weights not found: download them first\")\n"), 0o644)
	out, errOut := seedRun(t, dir, ExitError, "run", "--no-monitor", "--no-store", "--output-dir", "out", "--iterations", "1", "--warmup", "0")
	if !strings.Contains(out+errOut, "SystemExit: model weights not found: download them first") || strings.Contains(out+errOut, "exited during") {
		t.Errorf("the exit's message is lost:\n%s%s", out, errOut)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "out", "latest", "report.html"))
	if !strings.Contains(string(page), "SystemExit: model weights not found") {
		t.Errorf("report.html lacks the message")
	}
}

// TestDidYouMean: an unknown flag or metric name gets the nearest known one. Before: "unknown
// flag: --iteratons" alone, and seed 001's `history --metric latency,memory` said "no history of
// latency" with no hint that the name is latency_ms.
func TestDidYouMean(t *testing.T) {
	dir := t.TempDir()
	_, errOut := seedRun(t, dir, ExitUsage, "run", "--exec", "true", "--iteratons", "3")
	if !strings.Contains(errOut, "unknown flag: --iteratons (did you mean --iterations?)") {
		t.Errorf("--iteratons: %s", errOut)
	}
	seedRun(t, dir, 0, "run", "--exec", "true", "--iterations", "2", "--warmup", "0", "--no-monitor", "--store", "h.db", "--output-dir", "out")
	out, errOut := seedRun(t, dir, 0, "history", "--metric", "latency,memory", "--store", "h.db")
	if !strings.Contains(out+errOut, "no history of latency in the last 30 days (did you mean latency_ms?)") {
		t.Errorf("history --metric latency:\n%s%s", out, errOut)
	}
}

// TestListPredictsSkip: seed 003's test_accuracy.py imports hf_eco2ai, which this Python lacks:
// list names the skip that run makes, with the same reason. Before, list showed "-" and run
// skipped it.
func TestListPredictsSkip(t *testing.T) {
	seedPython(t)
	dir := seedProject(t, "003")
	out, _ := seedRun(t, dir, 0, "list", "--json")
	var rows []struct {
		Benchmark string `json:"benchmark"`
		Skip      string `json:"skip"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	skips := map[string]string{}
	for _, r := range rows {
		skips[r.Benchmark] = r.Skip
	}
	if !strings.Contains(skips["test_accuracy.benchmark_energy_tracking_accuracy"], "hf_eco2ai") {
		t.Fatalf("list does not predict the skip of test_accuracy: %v", skips)
	}
	if skips["test_memory.benchmark_memory_usage"] != "" {
		t.Errorf("test_memory, whose imports are there, listed as skipped: %q", skips["test_memory.benchmark_memory_usage"])
	}
	seedRun(t, dir, 0, "run", "--include", "test_accuracy", "--include", "test_memory", "--no-monitor", "--no-store", "--output-dir", "out", "--iterations", "1", "--warmup", "0")
	r := latestRun(t, filepath.Join(dir, "out"))
	for _, s := range r.Scenarios {
		if want := skips[s.Benchmark]; s.SkipReason != want {
			t.Errorf("%s: run's skip %q, list's %q", s.Benchmark, s.SkipReason, want)
		}
	}
}

// TestSeed001CSVName: seed 001 writes results/raw/benchmark_results_<timestamp>.csv; --csv gives
// that name ({timestamp} is the run's start), the same content as the run's summary.csv. Before,
// --output-dir gave <dir>/<id>/summary.csv only.
func TestSeed001CSVName(t *testing.T) {
	dir := t.TempDir()
	_, errOut := seedRun(t, dir, 0, "run", "--exec", "true", "--iterations", "2", "--warmup", "0", "--no-monitor", "--no-store",
		"--output-dir", "results/raw", "--csv", "results/raw/benchmark_results_{timestamp}.csv")
	got, _ := filepath.Glob(filepath.Join(dir, "results", "raw", "benchmark_results_*.csv"))
	if len(got) != 1 || !regexp.MustCompile(`benchmark_results_\d{8}_\d{6}\.csv$`).MatchString(got[0]) {
		t.Fatalf("files %v, want one benchmark_results_YYYYMMDD_HHMMSS.csv\n%s", got, errOut)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "results", "raw", "latest", "summary.csv"))
	data, _ := os.ReadFile(got[0])
	if len(want) == 0 || string(data) != string(want) {
		t.Errorf("%s differs from summary.csv", got[0])
	}
}

// TestSetReachesFunctionArgument: a benchmark function with a required argument fails with advice
// that works: --set NAME=VALUE, which reaches the argument. Before, the advice was "pass it as a
// param" and --set model_name=qwen was refused ("no selected benchmark has a parameter
// model_name (parameters: file, function)").
func TestSetReachesFunctionArgument(t *testing.T) {
	seedPython(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "benches"), 0o755)
	// batch on a line of its own: --set reaches the parameters of a def that spans lines
	os.WriteFile(filepath.Join(dir, "benches", "q.py"), []byte("def run_named(model_name,\n              batch=1,\n):\n    return {\"name_len\": len(model_name) * batch}\n"), 0o644)
	out, errOut := seedRun(t, dir, ExitError, "run", "--no-monitor", "--no-store", "--output-dir", "out", "--iterations", "1", "--warmup", "0")
	if !strings.Contains(out+errOut, "needs argument 'model_name': pass it with --set model_name=VALUE") {
		t.Errorf("the advice:\n%s%s", out, errOut)
	}
	seedRun(t, dir, 0, "run", "--set", "model_name=qwen", "--set", "batch=2", "--no-monitor", "--no-store", "--output-dir", "out", "--iterations", "1", "--warmup", "0")
	r := latestRun(t, filepath.Join(dir, "out"))
	if v, ok := r.Scenarios[0].Metrics["name_len"].Center(); !ok || v != 8 {
		t.Errorf("name_len = %v, want len(qwen)*2 = 8: the arguments did not reach the function", v)
	}
}

// TestDeclaredClassRunsOnce: a class in benches/model.py that a definition beside it declares
// (params file: and class:) is listed once, as the definition; another class of the file is still
// found on its own. Before, both the definition and model.Net were listed and run.
func TestDeclaredClassRunsOnce(t *testing.T) {
	dir := t.TempDir()
	benches := filepath.Join(dir, "benches")
	if err := os.MkdirAll(benches, 0o755); err != nil {
		t.Fatal(err)
	}
	const class = "class %s:\n    def setup_model(self, config):\n        pass\n\n    def measure_latency(self, config):\n        return {}\n\n"
	os.WriteFile(filepath.Join(benches, "model.py"), []byte(fmt.Sprintf(class, "Net")+fmt.Sprintf(class, "Other")), 0o644)
	os.WriteFile(filepath.Join(benches, "model.yaml"), []byte("name: net-sizes\nsubject: {kind: worker, adapter: pyfunc}\nparams: {file: model.py, class: Net}\nmatrix: {size: [1, 2]}\n"), 0o644)
	out, errOut := seedRun(t, dir, 0, "list")
	for _, want := range []string{"net-sizes", "model.Other"} {
		if !strings.Contains(out, want) {
			t.Errorf("list does not show %s:\n%s%s", want, out, errOut)
		}
	}
	if strings.Contains(out, "model.Net") {
		t.Errorf("list shows the declared class on its own too (model.Net):\n%s", out)
	}
}
