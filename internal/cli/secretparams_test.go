package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// TestSecretParamsRedacted: a parameter whose name is secret (redact.SecretName: hf_token) is
// masked in everything a run writes, given in the definition or with --set; one whose name only
// holds the word (num_tokens_to_generate) is written as given. Before, --set hf_token=... was in
// run.json's parameters, report.html and the store.
func TestSecretParamsRedacted(t *testing.T) {
	const secret = "hfsecret0123456789"
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "benches"), 0o755)
	def := "name: gen\nsubject: {kind: exec, command: [sh, -c, 'echo {hf_token} >&2']}\nparams: {hf_token: none, num_tokens_to_generate: 8}\nload: {warmup_iterations: 0, measurement_iterations: 2}\n"
	os.WriteFile(filepath.Join(dir, "benches", "gen.yaml"), []byte(def), 0o644)
	code, out, errOut := runCLI(t, dir, nil, "run", "--set", "hf_token="+secret, "--set", "num_tokens_to_generate=16",
		"--no-monitor", "--output-dir", "out", "--store", "h.db")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for where, text := range map[string]string{"stdout": out, "stderr": errOut} {
		if strings.Contains(text, secret) {
			t.Errorf("%s holds the secret", where)
		}
	}
	files := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, "benches") {
			return err
		}
		data, _ := os.ReadFile(p)
		if strings.Contains(string(data), secret) {
			i := strings.Index(string(data), secret)
			t.Errorf("%s holds the secret: %q", p, string(data[max(0, i-300):i+20]))
		}
		files++
		return nil
	})
	if files < 4 {
		t.Errorf("only %d files written", files)
	}
	r, err := result.Load(filepath.Join(dir, "out", result.LatestLink))
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(r.Config.Args, " ")
	if !strings.Contains(args, "--set hf_token=xxxxx") || !strings.Contains(args, "--set num_tokens_to_generate=16") {
		t.Errorf("config.args %q: want hf_token masked, num_tokens_to_generate kept", args)
	}
	p := r.Scenarios[0].Params
	if p["hf_token"] != "xxxxx" || p["num_tokens_to_generate"] != 16.0 {
		t.Errorf("params %v: want hf_token masked, num_tokens_to_generate 16", p)
	}
}
