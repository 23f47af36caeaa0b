package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/result"
)

// TestModelIDRelativeToWorkingDir: --model-id ./my-tiny-llama names the folder in the directory
// the command runs in, as a shell path does (issue 23: it was resolved from the definition's
// folder, where the benchmark runs).
func TestModelIDRelativeToWorkingDir(t *testing.T) {
	py := pyenv.Find(nil).Path
	if _, err := exec.LookPath(py); err != nil {
		t.Skipf("%s is not installed: the Python benchmark cannot run", py)
	}
	work := t.TempDir()
	writeTestFile(t, filepath.Join(work, "my-tiny-llama", "config.json"), "{}")
	writeTestFile(t, filepath.Join(work, "proj", "benches", "model.py"), `import os

def run_model(config):
    if not os.path.isfile(os.path.join(config.model_id, "config.json")):
        raise ValueError("config.model_id %r is not the folder given" % config.model_id)
    return {"items": 1}
`)
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, work, nil, "run", "proj", "--model-id", "./my-tiny-llama", "--iterations", "1", "--warmup", "0",
		"--output-dir", out, "--format", "none", "--no-monitor", "--no-store")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r, err := result.Load(filepath.Join(out, result.LatestLink))
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Scenarios[0]; s.Status != result.StatusOK || s.Params["model_id"] != filepath.Join(work, "my-tiny-llama") {
		t.Errorf("status %s (%s), model_id %v: want %s", s.Status, s.Error, s.Params["model_id"], filepath.Join(work, "my-tiny-llama"))
	}
	// A Hugging Face id that is no local path is passed as written.
	code, stdout, stderr = runCLI(t, work, nil, "list", "proj", "--model-id", "org/tiny", "--json")
	if code != 0 || !strings.Contains(stdout, `"model_id": "org/tiny"`) {
		t.Errorf("exit %d, want org/tiny as written:\n%s\n%s", code, stdout, stderr)
	}
}

// TestOpenAIModelID: --openai takes --model-id as the served model's name, as seed 004 writes it
// (issue 23: it asked for --model instead).
func TestOpenAIModelID(t *testing.T) {
	// The server serves only "tiny": a request for any other model is a 404.
	url := startMock(t, mockserver.Config{Model: "tiny", OutputTokens: workload.Fixed(2)})
	code, stdout, stderr := runCLI(t, t.TempDir(), nil, "run", "--openai", url, "--model-id", "tiny", "--requests", "3", "--warmup", "0",
		"--format", "json", "--no-monitor", "--no-store")
	if code != 0 {
		t.Fatalf("exit %d, want the run of model tiny:\n%s\n%s", code, stdout, stderr)
	}
	r := decodeRun(t, stdout)
	if s := r.Scenarios[0]; s.Model != "tiny" || s.Iterations.Measured != 3 {
		t.Errorf("model %q, %d requests: want tiny, 3", s.Model, s.Iterations.Measured)
	}
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHistorySeveralMetrics: history --metric a,b shows each metric (issue 23: "unknown
// statistic"), and a format that holds one metric says so.
func TestHistorySeveralMetrics(t *testing.T) {
	dir := t.TempDir()
	for i, id := range []string{"ra", "rb", "rc"} {
		saveRun(t, dir, id, uint64(i), 10)
		if code, out, errOut := runCLI(t, dir, nil, "import", "benchmark_results/"+id+"/run.json", "--id", id); code != ExitOK {
			t.Fatalf("import %s: exit %d\n%s%s", id, code, out, errOut)
		}
	}
	code, out, errOut := runCLI(t, dir, nil, "history", "resnet", "--metric", "latency_ms.p50,latency_ms.p95", "--days", "0", "--scenario", "batch_size=1")
	if code != ExitOK || !strings.Contains(out, "== latency_ms.p50 ==") || !strings.Contains(out, "== latency_ms.p95 ==") || strings.Count(out, "3 points") != 2 {
		t.Errorf("history --metric a,b: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, dir, nil, "history", "--metric", "latency_ms.p50,latency_ms.p95", "--json")
	if code != ExitUsage || !strings.Contains(errOut, "give one metric") {
		t.Errorf("history --metric a,b --json: exit %d, %s", code, errOut)
	}
}

// TestFrameworkSetInput: seed 001's data_source, --set input=data/imagenet100, is taken on a
// --framework run (issue 23: refused, as no benchmark declared input).
func TestFrameworkSetInput(t *testing.T) {
	code, out, errOut := runCLI(t, t.TempDir(), nil, "run", "--framework", "pytorch", "--model", "resnet18", "--set", "input=data/imagenet100", "--dry-run")
	if code != 0 || !strings.Contains(out, "resnet18/framework=pytorch/batch_size=1") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	// A typo is still caught.
	if code, _, errOut := runCLI(t, t.TempDir(), nil, "run", "--framework", "pytorch", "--set", "inptu=x", "--dry-run"); code != ExitUsage || !strings.Contains(errOut, `did you mean "input"`) {
		t.Errorf("--set inptu=x: exit %d, %s", code, errOut)
	}
}
