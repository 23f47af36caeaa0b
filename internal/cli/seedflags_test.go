package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/result"
)

// TestSelectionNamesNothing: seed 004's --include llama_benchmark selected nothing and
// --exclude mock_benchmark was a silent no-op; a pattern that names no benchmark is now a usage
// error naming the flag, and "0 benchmarks found" says where discovery looked and for what.
func TestSelectionNamesNothing(t *testing.T) {
	project := filepath.Join(testdata, "project")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		// an --exclude that names nothing is reported, not ignored
		{"exclude names nothing", []string{"run", project, "--enable-mock", "--dry-run", "--exclude", "mock_benchmark"}, []string{"--exclude mock_benchmark: no benchmark or scenario has this name"}},
		// an --include typo likewise
		{"include names nothing", []string{"run", project, "--enable-mock", "--dry-run", "--include", "quick_mock"}, []string{"--include quick_mock"}},
		// nothing discovered: where and what
		{"nothing found", []string{"run", t.TempDir(), "--dry-run"}, []string{"0 benchmarks found", "looked below", "benchmarks/{unit,integration,performance}/"}},
		{"negative tokens", []string{"run", project, "--dry-run", "--num-tokens-to-generate", "-1"}, []string{"num-tokens-to-generate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", nil, tc.args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitUsage, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q does not say %q", errOut, w)
				}
			}
		})
	}
	// A bare benchmark name selects it.
	code, out, errOut := runCLI(t, "", nil, "run", project, "--enable-mock", "--dry-run", "--include", "quick-mock")
	if code != 0 || strings.Count(out, "quick-mock/") != 2 {
		t.Errorf("--include quick-mock: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestNumTokensToGenerate: seed 004's --num-tokens-to-generate sets max_new_tokens, which the
// mock, torch_llm and OpenAI subjects take as the tokens to generate.
func TestNumTokensToGenerate(t *testing.T) {
	proj := t.TempDir()
	def := "name: gen\nsubject: {kind: mock, latency_ms: 0.2, jitter: 0.01, generate: {output_tokens: 16, ttft_ms: 0.2, itl_ms: 0.05}}\nload: {warmup_iterations: 0, measurement_iterations: 2}\n"
	if err := os.MkdirAll(filepath.Join(proj, "benches"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "benches", "gen.yaml"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "", nil, "run", proj, "--enable-mock", "--num-tokens-to-generate", "3", "--output-dir", dir, "--format", "none")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	data, err := os.ReadFile(filepath.Join(dir, result.LatestLink, result.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	var r result.Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	m, ok := r.Scenarios[0].Metrics["output_tokens"]
	if !ok || m.Summary == nil || m.Summary.Median != 3 {
		t.Errorf("output_tokens = %+v, want 3 per call", m.Summary)
	}
}

// TestModelID: seed 004's --model-id (unknown flag before; only --set model_id= worked, and only
// where a benchmark declared it) sets model_id in every scenario: a Python benchmark reads it as
// config.model_id, and the run records it with the overrides.
func TestModelID(t *testing.T) {
	py := pyenv.Find(nil).Path
	if _, err := exec.LookPath(py); err != nil {
		t.Skipf("%s is not installed: the Python benchmark cannot run", py)
	}
	proj := t.TempDir()
	def := `def run_model(config):
    if config.model_id != "gpt2":
        raise ValueError("config.model_id is %r" % config.model_id)
    return {"items": 1}
`
	if err := os.MkdirAll(filepath.Join(proj, "benches"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "benches", "model.py"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "", nil, "run", proj, "--model-id", "gpt2", "--iterations", "2", "--warmup", "0",
		"--output-dir", dir, "--format", "none", "--no-monitor")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	r, err := result.Load(filepath.Join(dir, result.LatestLink))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Scenarios) != 1 || r.Scenarios[0].Status != result.StatusOK {
		t.Fatalf("scenarios %+v", r.Scenarios)
	}
	s := r.Scenarios[0]
	if s.Params["model_id"] != "gpt2" || r.Config.Set["model_id"] != "gpt2" {
		t.Errorf("params %v, recorded overrides %v: want model_id gpt2 in both", s.Params, r.Config.Set)
	}
	code, out, errOut = runCLI(t, "", nil, "run", "--help")
	if code != 0 || !strings.Contains(errOut+out, "--model-id") {
		t.Errorf("run --help does not list --model-id")
	}
}
