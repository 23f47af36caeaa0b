package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/suite"
)

func TestScanPython(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []PyBenchmark
	}{
		{"functions", `
import time

def run_basic_performance_benchmark():
    """A basic performance benchmark example."""
    return {}

def benchmark_memory(size=10):
    return 1

def helper():
    pass
`, []PyBenchmark{
			{Name: "run_basic_performance_benchmark", Line: 4, Doc: "A basic performance benchmark example."},
			{Name: "benchmark_memory", Line: 8, Args: []string{"size"}},
		}},
		// seed 003: run_training_benchmark(callbacks) is a helper the benchmark calls (issue 23:
		// it was run on its own and failed for want of callbacks)
		{"helper", `
def run_training_benchmark(callbacks):
    return len(callbacks)

def benchmark_training_overhead():
    """Measure training time with and without carbon tracking."""
    baseline_time = run_training_benchmark(callbacks=[])
    return baseline_time

if __name__ == "__main__":
    benchmark_training_overhead()
`, []PyBenchmark{
			{Name: "benchmark_training_overhead", Line: 5, Doc: "Measure training time with and without carbon tracking."},
		}},
		// the seed's ModelBenchmark subclasses; the abstract base and the runner entry point are left out
		{"classes", `
class ModelBenchmark(ABC):
    @abstractmethod
    def setup_model(self, config): ...
    @abstractmethod
    def measure_latency(self, config): ...

class Base:
    @abc.abstractmethod
    def setup_model(self, config): ...
    def measure_latency(self, config): ...

class LlamaBenchmark(ModelBenchmark):
    """Llama, three variants."""
    def __init__(self, logger):
        self.logger = logger
    def setup_model(self, config):
        pass
    def measure_time_to_first_token(self, config):
        return 0.0
    def measure_latency(self, config):
        return 0.0

def run_llama_benchmark(logger, output_dir="benchmark_results", **kwargs):
    benchmark = LlamaBenchmark(logger)
    return runner.run_benchmark(benchmark, configs)

def benchmark_kept():
    pass
`, []PyBenchmark{
			{Name: "benchmark_kept", Line: 28},
			{Name: "LlamaBenchmark", Class: true, Line: 13, Doc: "Llama, three variants.",
				Methods: []string{"setup_model", "measure_latency", "measure_time_to_first_token"}},
		}},
		// a def whose parameters span several lines: every line's are read (--set reached only
		// the first line's), whatever brackets, strings and comments they hold, and the docstring
		// after the signature is still the doc
		{"multiline", `
def run_generate(
    model_name: str,  # the checkpoint, e.g. "gpt2", not (a, b)
    batch: tuple[int, int] = (1, 2),
    *,
    prompt="a, b) c",
    logger=None,
    **kwargs,
):
    """Generate with a model."""
    return {}

def benchmark_two(size,
                  steps=lambda: dict(a=1, b=[2, 3])):
    return size

def helper(
    n,
):
    pass
`, []PyBenchmark{
			{Name: "run_generate", Line: 2, Doc: "Generate with a model.", Args: []string{"model_name", "batch", "prompt"}},
			{Name: "benchmark_two", Line: 13, Args: []string{"size", "steps"}},
		}},
		// definitions inside strings and nested functions are not benchmarks
		{"strings", `
text = """
def run_inside_a_string():
    pass
"""

def outer():
    def run_nested():
        pass
`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ScanPython([]byte(tc.src))); diff != "" {
				t.Errorf("ScanPython (-want +got):\n%s", diff)
			}
		})
	}
}

// manyFunctions is a Python file of n run_ functions, each calling a helper run_ function of
// its own (which is left out), and a class that the last function names (its runner).
func manyFunctions(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "def run_f%d(model_name):\n    \"\"\"Benchmark %d.\"\"\"\n    return run_helper%d (model_name)\n\n", i, i, i)
		fmt.Fprintf(&b, "def run_helper%d(x):\n    return x\n\n", i)
	}
	b.WriteString("class Bench:\n    def setup_model(self):\n        pass\n    def measure_latency(self):\n        pass\n\n")
	b.WriteString("def run_runner():\n    return Bench()\n")
	return []byte(b.String())
}

// TestScanPythonManyFunctions: a file of 20,000 run_ functions is scanned in one pass over its
// bodies. A regexp per function over every body took 81 s (quadratic); the bound, far above the
// milliseconds a linear scan takes, only stops a quadratic one (BenchmarkScanPython measures).
func TestScanPythonManyFunctions(t *testing.T) {
	const n = 20000
	src := manyFunctions(n)
	done := make(chan []PyBenchmark, 1)
	go func() { done <- ScanPython(src) }()
	var got []PyBenchmark
	select {
	case got = <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("ScanPython of %d run_ functions still running after 20s: quadratic in the functions", n)
	}
	if len(got) != n+1 {
		t.Fatalf("found %d benchmarks, want %d functions and the class (helpers and the runner left out)", len(got), n+1)
	}
	if got[0].Name != "run_f0" || got[0].Doc != "Benchmark 0." || !slices.Equal(got[0].Args, []string{"model_name"}) ||
		got[n-1].Name != fmt.Sprintf("run_f%d", n-1) || got[n].Name != "Bench" || !got[n].Class {
		t.Errorf("first %+v, last function %+v, class %+v", got[0], got[n-1], got[n])
	}
}

// BenchmarkScanPython measures the scan of a file of n run_ functions (linear in n).
func BenchmarkScanPython(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		src := manyFunctions(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				ScanPython(src)
			}
		})
	}
}

func TestPythonFilesInSuite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "benches", "unit")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"seed_bench.py", "seed_class.py"} {
		b, err := os.ReadFile(filepath.Join("../../workers/python/tests/testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// a helper module without benchmarks is not an error
	if err := os.WriteFile(filepath.Join(dir, "framework.py"), []byte("X = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	benches, err := suite.Load(nil, filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range benches {
		got = append(got, b.Name+" "+b.Category+" "+b.Kind+" "+b.Params["file"].(string))
	}
	want := []string{
		"seed_bench.run_sum_benchmark unit worker seed_bench.py",
		"seed_bench.benchmark_noop unit worker seed_bench.py",
		"seed_bench.benchmark_items unit worker seed_bench.py",
		"seed_class.benchmark_kept unit worker seed_class.py",
		"seed_class.TinyModelBenchmark unit worker seed_class.py",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("benchmarks (-want +got):\n%s", diff)
	}
}

// TestSeedLayoutPythonModels: seed 000's layout, benchmarks/{unit,...}/ at the top and
// src/**/models/NAME/benchmarks/{unit,...}/ per model. The model comes from the models/NAME/ path,
// and one file name in two model folders is two benchmarks (it was a duplicate-name error).
func TestSeedLayoutPythonModels(t *testing.T) {
	root := t.TempDir()
	src := "def run_speed_benchmark():\n    return {'items': 1}\n"
	for _, rel := range []string{
		"benchmarks/unit/benchmark_core.py",
		"src/inference_pio/models/qwen3/benchmarks/performance/benchmark_speed.py",
		"src/inference_pio/models/glm4/benchmarks/performance/benchmark_speed.py",
		"benchmarks/scripts/helper_benchmark.py", // not a category folder: a script, not a definition
	} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	benches, err := suite.Load(nil, root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range benches {
		got = append(got, b.Name+" model="+b.Model+" "+b.Category)
	}
	want := []string{
		"benchmark_core.run_speed_benchmark model=benchmark_core unit",
		"glm4/benchmark_speed.run_speed_benchmark model=glm4 performance",
		"qwen3/benchmark_speed.run_speed_benchmark model=qwen3 performance",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("benchmarks (-want +got):\n%s", diff)
	}
	// --include with the bare file name selects both models' benchmarks.
	f := suite.Filter{Include: []string{"benchmark_speed"}}
	var all []*suite.Scenario
	for _, b := range benches {
		all = append(all, b.Expand(nil)...)
	}
	var sel []string
	for _, sc := range f.Select(all) {
		sel = append(sel, sc.ID())
	}
	if diff := cmp.Diff([]string{"glm4/benchmark_speed.run_speed_benchmark/default", "qwen3/benchmark_speed.run_speed_benchmark/default"}, sel); diff != "" {
		t.Errorf("--include benchmark_speed (-want +got):\n%s", diff)
	}
}

// TestExternalImports: the requirements of a benchmark file are its top-level imports less the
// standard library, relative imports and the project's own modules.
func TestExternalImports(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "helpers.py"), nil, 0o644)
	os.MkdirAll(filepath.Join(dir, "src", "mypkg"), 0o755)
	sub := filepath.Join(dir, "benches")
	os.MkdirAll(sub, 0o755)
	src := "import time, json\nimport numpy as np\nfrom hf_eco2ai.x import y  # energy\nfrom . import z\nimport helpers\nfrom mypkg import a\n" +
		"try:\n    import optional_thing\nexcept ImportError:\n    pass\ndef run_x():\n    import torch\n"
	got := externalImports(filepath.Join(sub, "b.py"), []byte(src))
	if want := []string{"numpy", "hf_eco2ai"}; !slices.Equal(got, want) {
		t.Errorf("externalImports = %v, want %v", got, want)
	}
}
