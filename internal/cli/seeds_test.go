package cli

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/result"
)

// The seeds' workflows as their READMEs write them (issue 23): testdata/seeds/NNN is a small
// project in seed NNN's own layout, and each test runs the seed's commands on a copy of it and
// checks what the seed promises. docs/seeds.md lists where inferbench does something safer.

// seedProject copies testdata/seeds/n into a temporary folder and returns it.
func seedProject(t *testing.T, n string) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "seeds", n)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// seedPython skips the test when no Python can run the seed's benchmark files.
func seedPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath(pyenv.Find(nil).Path); err != nil {
		t.Skipf("%s is not installed: the seed's Python benchmarks cannot run", pyenv.Find(nil).Path)
	}
}

// seedRun runs inferbench in dir and fails the test unless it exits with want.
func seedRun(t *testing.T, dir string, want int, args ...string) (string, string) {
	t.Helper()
	code, out, errOut := runCLI(t, dir, nil, args...)
	if code != want {
		t.Fatalf("inferbench %s: exit %d, want %d\n%s\n%s", strings.Join(args, " "), code, want, out, errOut)
	}
	return out, errOut
}

// seedRunEnv is seedRun with environment variables.
func seedRunEnv(t *testing.T, dir string, env []string, want int, args ...string) (string, string) {
	t.Helper()
	code, out, errOut := runCLI(t, dir, env, args...)
	if code != want {
		t.Fatalf("inferbench %s: exit %d, want %d\n%s\n%s", strings.Join(args, " "), code, want, out, errOut)
	}
	return out, errOut
}

// mailbox is a plain SMTP relay on loopback that keeps the first session's commands and message.
type mailbox struct {
	addr string
	got  chan string
}

func plainSMTP(t *testing.T) *mailbox {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	m := &mailbox{addr: ln.Addr().String(), got: make(chan string, 1)}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		r := bufio.NewReader(c)
		var b strings.Builder
		fmt.Fprint(c, "220 mailbox\r\n")
		data := false
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				break
			}
			b.WriteString(line)
			switch cmd := strings.ToUpper(strings.TrimSpace(line)); {
			case data:
				if line == ".\r\n" {
					data = false
					fmt.Fprint(c, "250 queued\r\n")
				}
			case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
				fmt.Fprint(c, "250 mailbox\r\n")
			case cmd == "DATA":
				data = true
				fmt.Fprint(c, "354 go\r\n")
			case cmd == "QUIT":
				fmt.Fprint(c, "221 bye\r\n")
				m.got <- b.String()
				return
			default:
				fmt.Fprint(c, "250 ok\r\n")
			}
		}
		m.got <- b.String()
	}()
	return m
}

func (m *mailbox) wait(t *testing.T) string {
	t.Helper()
	select {
	case s := <-m.got:
		return s
	case <-time.After(20 * time.Second):
		t.Fatal("no email arrived")
		return ""
	}
}

// latestRun reads the newest run under a results folder.
func latestRun(t *testing.T, dir string) *result.Run {
	t.Helper()
	r, err := result.Load(filepath.Join(dir, result.LatestLink))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func seedIDs(r *result.Run) []string {
	var ids []string
	for _, s := range r.Scenarios {
		ids = append(ids, s.ID()+" "+s.Status)
	}
	slices.Sort(ids)
	return ids
}

// TestSeed000 (Inference-PIO): benchmarks/{unit,...}/ and src/**/models/NAME/benchmarks/{...}/,
// run_*/benchmark_* functions, categories and models to select by, results in
// benchmark_results/<timestamp>/ as JSON and CSV with each function's own figures.
func TestSeed000(t *testing.T) {
	seedPython(t)
	dir := seedProject(t, "000")
	out, _ := seedRun(t, dir, 0, "list")
	for _, want := range []string{
		"basic.run_basic_performance_benchmark  default   unit         basic",
		"scalability.run_scalability_benchmark  default   performance  scalability",
		"qwen3_vl_2b/memory.run_memory_usage_benchmark  default   performance  qwen3_vl_2b",
		"qwen3_vl_2b/captions.benchmark_tokenize        default   unit         qwen3_vl_2b",
		"4 benchmarks, 4 scenarios",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("list: no %q in\n%s", want, out)
		}
	}
	// discovery.run_all_benchmarks(include_categories=['performance'])
	seedRun(t, dir, 0, "run", "--category", "performance", "--iterations", "2", "--warmup", "0", "--no-monitor", "--no-store")
	r := latestRun(t, filepath.Join(dir, "benchmark_results"))
	if got, want := seedIDs(r), []string{"qwen3_vl_2b/memory.run_memory_usage_benchmark/default ok", "scalability.run_scalability_benchmark/default ok"}; !slices.Equal(got, want) {
		t.Errorf("--category performance ran %q, want %q", got, want)
	}
	for _, s := range r.Scenarios {
		for _, m := range map[string][]string{
			"scalability.run_scalability_benchmark":         {"size_100_time", "size_100_throughput", "size_1000_throughput"},
			"qwen3_vl_2b/memory.run_memory_usage_benchmark": {"memory_used_mb", "final_memory_mb"},
		}[s.Benchmark] {
			if _, ok := s.Metrics[m]; !ok {
				t.Errorf("%s: no %s among %v", s.ID(), m, slices.Sorted(mapsKeys(s.Metrics)))
			}
		}
	}
	// A timestamped folder with the JSON and the CSV.
	for _, f := range []string{"run.json", "summary.csv"} {
		if _, err := os.Stat(filepath.Join(dir, "benchmark_results", r.ID, f)); err != nil {
			t.Errorf("no %s in the run's folder: %v", f, err)
		}
	}
	// discovery.run_model_benchmarks('qwen3_vl_2b'), with the import from the project's src.
	seedRun(t, dir, 0, "run", "--model", "qwen3_vl_2b", "--iterations", "2", "--warmup", "0", "--no-monitor", "--no-store")
	if got := seedIDs(latestRun(t, filepath.Join(dir, "benchmark_results"))); len(got) != 2 || !strings.HasPrefix(got[0], "qwen3_vl_2b/") || !strings.HasPrefix(got[1], "qwen3_vl_2b/") {
		t.Errorf("--model qwen3_vl_2b ran %q", got)
	}
	seedRun(t, dir, 0, "run", "--include", "basic", "--iterations", "2", "--warmup", "0", "--no-monitor", "--no-store")
	if s := latestRun(t, filepath.Join(dir, "benchmark_results")).Scenarios[0]; s.Status != result.StatusOK || s.Metrics["result_size"].Summary == nil {
		t.Errorf("basic (imports src.inference_pio.test_utils): %s %s", s.Status, s.Error)
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestSeed001 (594Project): bench/runner.py's flags on --framework, results in results/raw as
// CSV with the seed's columns, and the ImageNet-100 folder as --set input=data/imagenet100.
func TestSeed001(t *testing.T) {
	dir := seedProject(t, "001")
	out, _ := seedRun(t, dir, 0, "run", "--framework", "pytorch", "--model", "resnet50", "--batch-sizes", "1", "4", "--iterations", "10", "--warmup", "3", "--dry-run")
	if want := "resnet50/framework=pytorch/batch_size=1\t(command line)\nresnet50/framework=pytorch/batch_size=4\t(command line)\n"; out != want {
		t.Errorf("dry run:\n%s\nwant\n%s", out, want)
	}
	out, _ = seedRun(t, dir, 0, "run", "--framework", "both", "--model", "both", "--batch-sizes", "1", "--dry-run")
	if n := strings.Count(out, "\n"); n != 4 {
		t.Errorf("--framework both --model both: %d scenarios, want 4\n%s", n, out)
	}
	if testing.Short() {
		t.Skip("-short: the seed's real run starts a torch worker")
	}
	py := ""
	for _, p := range []string{"../../.venv/bin/python", "/usr/bin/python3"} {
		abs, _ := filepath.Abs(p)
		if exec.Command(abs, "-c", "import torch, torchvision").Run() == nil {
			py = abs
			break
		}
	}
	if py == "" {
		t.Skip("no Python with torch and torchvision: the seed's real run is not tried")
	}
	code, out, errOut := runCLI(t, dir, []string{"INFERBENCH_PYTHON=" + py}, "run", "--framework", "pytorch", "--model", "resnet18", "--batch-sizes", "1",
		"--iterations", "2", "--warmup", "1", "--image-size", "32", "--device", "cpu", "--set", "input=data/imagenet100",
		"--output-dir", "results/raw", "--no-monitor", "--no-store")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	r := latestRun(t, filepath.Join(dir, "results", "raw"))
	for _, s := range r.Scenarios {
		setup, _ := s.Environment["setup"].(map[string]any)
		if s.Status != result.StatusOK || s.Params["input"] != "data/imagenet100" || setup["input"] != "data/imagenet100" {
			t.Errorf("%s: %s %s, input %v, worker's input %v", s.ID(), s.Status, s.Error, s.Params["input"], setup["input"])
		}
	}
	f, err := os.Open(filepath.Join(dir, "results", "raw", r.ID, "summary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("summary.csv: %d rows, %v", len(rows), err)
	}
	for _, col := range []string{"framework", "model", "device", "device_type", "batch_size", "input_shape", "dtype", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "throughput_ips", "timestamp"} {
		i := slices.Index(rows[0], col)
		if i < 0 || rows[1][i] == "" {
			t.Errorf("summary.csv: column %s missing or empty (%q)", col, rows[0])
		}
	}
}

// TestSeed002 (Fast VLM): a CI job writes benchmark-results/, the baseline is set from a run, the
// next run is compared with it at a threshold and a regression fails the job (exit 3); the
// budgets of performance-budget.yml are checked on every run.
func TestSeed002(t *testing.T) {
	dir := seedProject(t, "002")
	out, _ := seedRun(t, dir, 0, "run", "--enable-mock", "--output-dir", "benchmark-results", "--no-monitor")
	if !strings.Contains(out, "budgets: 2 checked, 0 exceeded") {
		t.Errorf("performance-budget.yml's two budgets were not checked:\n%s", out)
	}
	seedRun(t, dir, 0, "baseline", "set", "main", "latest")
	seedRun(t, dir, 0, "run", "--enable-mock", "--output-dir", "benchmark-results", "--no-monitor", "--baseline", "main", "--threshold", "latency=15")
	// The model got slower: 20 ms -> 30 ms.
	def := filepath.Join(dir, "benchmarks", "performance", "inference.yaml")
	data, _ := os.ReadFile(def)
	os.WriteFile(def, []byte(strings.Replace(string(data), "latency_ms: 20", "latency_ms: 30", 1)), 0o644)
	out, _ = seedRun(t, dir, ExitRegression, "run", "--enable-mock", "--output-dir", "benchmark-results", "--no-monitor", "--baseline", "main", "--threshold", "latency=15")
	if !strings.Contains(out, "mobile_inference") {
		t.Errorf("the regression does not name the benchmark:\n%s", out)
	}
	// The seed's alert: "memory_growth ... action: email_notification, recipients: [dev-team@...]"
	// is a rule mailed to its recipients through the environment's SMTP server.
	mailbox := plainSMTP(t)
	_, errOut := seedRunEnv(t, dir, []string{"INFERBENCH_SMTP_ADDR=" + mailbox.addr, "INFERBENCH_SMTP_STARTTLS=off", "INFERBENCH_SMTP_FROM=ci@example.com"}, 0,
		"run", "--enable-mock", "--output-dir", "benchmark-results", "--no-store", "--alert", "memory_mb.max > 100 -> email dev-team@company.com")
	if msg := mailbox.wait(t); !strings.Contains(msg, "RCPT TO:<dev-team@company.com>") || !strings.Contains(msg, "mobile_inference/default: memory_mb.max = 300 > 100") {
		t.Errorf("the alert's email:\n%s\nstderr: %s", msg, errOut)
	}
	// A budget the model exceeds fails the job too.
	os.WriteFile(filepath.Join(dir, "performance-budget.yml"), []byte("budgets:\n  mobile_inference:\n    max_latency_ms: 25\n"), 0o644)
	seedRun(t, dir, ExitRegression, "run", "--enable-mock", "--output-dir", "benchmark-results", "--no-monitor", "--no-store")
}

// TestSeed003 (HF Eco2AI): pytest-benchmark's flat benchmarks/test_*.py, the helper that is no
// benchmark, the seed's budgets (performance-budget.yml), a missing plugin module skipped with
// its name, and config.py and profile_memory.py left alone.
func TestSeed003(t *testing.T) {
	seedPython(t)
	dir := seedProject(t, "003")
	out, _ := seedRun(t, dir, 0, "validate")
	for _, want := range []string{"benchmarks/test_overhead.py: test_overhead.benchmark_training_overhead", "ok: 3 benchmarks, 3 scenarios"} {
		if !strings.Contains(out, want) {
			t.Errorf("validate: no %q in\n%s", want, out)
		}
	}
	out, _ = seedRun(t, dir, 0, "list")
	if strings.Contains(out, "run_training_benchmark") || strings.Contains(out, "config") || strings.Contains(out, "profile_memory") {
		t.Errorf("list shows a helper or a script:\n%s", out)
	}
	out, _ = seedRun(t, dir, 0, "run", "--iterations", "3", "--warmup", "0", "--no-monitor", "--no-store")
	r := latestRun(t, filepath.Join(dir, "benchmark_results"))
	want := []string{
		"test_accuracy.benchmark_energy_tracking_accuracy/default skipped",
		"test_memory.benchmark_memory_usage/default ok",
		"test_overhead.benchmark_training_overhead/default ok",
	}
	if got := seedIDs(r); !slices.Equal(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}
	for _, s := range r.Scenarios {
		if s.Status == result.StatusSkipped && !strings.Contains(s.SkipReason, "'hf_eco2ai'") {
			t.Errorf("%s skipped for %q: want the missing module named", s.ID(), s.SkipReason)
		}
	}
	if !strings.Contains(out, "budgets: 2 checked, 0 exceeded") {
		t.Errorf("the seed's budgets were not checked:\n%s", out)
	}
	// An empty project says where it looked and how to fix it.
	_, errOut := seedRun(t, t.TempDir(), ExitUsage, "list")
	if !strings.Contains(errOut, "benchmarks/test_*.py") || !strings.Contains(errOut, "to fix") {
		t.Errorf("list of an empty folder: %s", errOut)
	}
}

// TestSeed004 (Benchmarking Framework v2): benches/ with ModelBenchmark classes and their runner
// entry points, --include/--exclude by file name, --num-tokens-to-generate and --model-id given to
// config, the mock benchmark only with --enable-mock, a class over eager/compiled/kernelized, and
// tokens/s in the summary.
func TestSeed004(t *testing.T) {
	seedPython(t)
	dir := seedProject(t, "004")
	// The class LlamaBenchmark runs once: as variants.yaml declares it (over the three variants),
	// not also on its own with its defaults as llama_benchmark.LlamaBenchmark.
	out, _ := seedRun(t, dir, 0, "list")
	if strings.Contains(out, "run_llama_benchmark") || strings.Contains(out, "llama_benchmark.LlamaBenchmark") || !strings.Contains(out, "llama-variants") {
		t.Errorf("list: the runner entry point is listed, or the declared class is listed twice or not at all:\n%s", out)
	}
	// --include by the Python file's name selects the definition that runs it.
	out, _ = seedRun(t, dir, 0, "run", "--output-dir", "my_results", "--include", "llama_benchmark", "--warmup-iterations", "1",
		"--measurement-iterations", "3", "--num-tokens-to-generate", "10", "--model-id", "gpt2", "--no-monitor", "--no-store")
	r := latestRun(t, filepath.Join(dir, "my_results"))
	if len(r.Scenarios) != 3 || r.Scenarios[0].Status != result.StatusOK || r.Scenarios[0].Benchmark != "llama-variants" {
		t.Fatalf("--include llama_benchmark: %q", seedIDs(r))
	}
	s := r.Scenarios[0]
	if s.Params["max_new_tokens"] != float64(10) || s.Params["model_id"] != "gpt2" || s.Metrics["tokens_per_s"].Summary == nil || s.Metrics["ttft_ms"].Summary == nil {
		t.Errorf("params %v, metrics %v", s.Params, slices.Sorted(mapsKeys(s.Metrics)))
	}
	// The seed's per-model file and benchmark_summary.json, beside run.json.
	runDir := filepath.Join(dir, "my_results", result.LatestLink)
	// A model name that is already a safe file name ("llama") is kept as it is.
	const modelFile, summaryFile = "models/llama.json", "benchmark_summary.json"
	if s.Model != "llama" {
		t.Fatalf("model %q, want llama", s.Model)
	}
	model, err := result.Load(filepath.Join(runDir, modelFile))
	if err != nil {
		t.Fatalf("the model's file: %v", err)
	}
	if got := seedIDs(model); len(got) != 3 || !slices.Contains(got, s.ID()+" ok") || model.Scenarios[0].Metrics["tokens_per_s"].Summary == nil {
		t.Errorf("%s holds %q, want %s with its metrics", modelFile, got, s.ID())
	}
	var bs struct {
		Summary result.Summary
		Models  []struct {
			Model, File string
			Scenarios   []struct {
				Status  string
				Metrics map[string]result.Metric
			}
		}
	}
	if data, err := os.ReadFile(filepath.Join(runDir, summaryFile)); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(data, &bs); err != nil {
		t.Fatalf("%s: %v", summaryFile, err)
	}
	if len(bs.Models) != 1 || bs.Models[0].Model != s.Model || bs.Models[0].File != modelFile ||
		len(bs.Models[0].Scenarios) != 3 || bs.Models[0].Scenarios[0].Status != result.StatusOK ||
		bs.Models[0].Scenarios[0].Metrics["tokens_per_s"].Summary == nil || bs.Summary.Succeeded != 3 {
		t.Errorf("%s: %+v", summaryFile, bs)
	}
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[0], "TOKENS/s") || strings.HasSuffix(strings.TrimSpace(lines[1]), "-") {
		t.Errorf("the TOKENS/s column does not show the class's tokens/s:\n%s", out)
	}
	// The mock: skipped by default (and a run of nothing but it measured nothing: exit 1).
	_, errOut := seedRun(t, dir, ExitError, "run", "--include", "mock_benchmark", "--no-monitor", "--no-store")
	if !strings.Contains(errOut, "--enable-mock") {
		t.Errorf("the mock's skip does not say --enable-mock: %s", errOut)
	}
	seedRun(t, dir, 0, "run", "--include", "mock_benchmark", "--enable-mock", "--warmup-iterations", "1", "--measurement-iterations", "2",
		"--num-tokens-to-generate", "10", "--no-monitor", "--no-store")
	// --exclude old_benchmark; the variants of variants.yaml.
	seedRun(t, dir, 0, "run", "--exclude", "old_benchmark", "--warmup-iterations", "1",
		"--measurement-iterations", "5", "--no-monitor", "--no-store")
	r = latestRun(t, filepath.Join(dir, "benchmark_results"))
	want := []string{"llama-variants/variant=compiled ok", "llama-variants/variant=eager ok", "llama-variants/variant=kernelized ok", "mock_benchmark.MockBenchmark/default skipped"}
	if got := seedIDs(r); !slices.Equal(got, want) {
		t.Fatalf("ran %q, want %q", got, want)
	}
	tok := map[string]float64{}
	for _, s := range r.Scenarios {
		if s.Status == result.StatusOK {
			tok[s.Params["variant"].(string)] = s.Metrics["tokens_per_s"].Summary.Median
		}
	}
	// The stand-in sleeps 0.4, 0.2 and 0.1 ms per token: each variant ran as itself.
	if !(tok["eager"] < tok["compiled"] && tok["compiled"] < tok["kernelized"]) {
		t.Errorf("tokens/s by variant %v: want eager < compiled < kernelized", tok)
	}
}
