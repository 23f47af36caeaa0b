package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/testkit/mlflowtest"
	"github.com/inferbench/inferbench/internal/testkit/otlptest"
)

// TestSecretValueEverywhere: a value equal to a known secret ($HF_TOKEN's) is masked in every
// file a run writes, whatever parameter carries it: --set model_id=<the token> on a matrix axis
// (so the scenario's name holds it too) and a parameter given the token in the definition. The
// test greps every artifact: the run folder (run.json in full with config.set, models/*.json,
// benchmark_summary.json, summary.csv, run.log, report.html, logs), the store, the exports on
// stdout, the spans sent over OTLP and what the MLflow server received. Before, config.set,
// models/<model>.json and the scenario's name held it in clear.
func TestSecretValueEverywhere(t *testing.T) {
	const secret = "hf_TruthSecret0123456789abcdef"
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "benches"), 0o755)
	def := "name: sec\nmodel: m\nsubject: {kind: exec, command: [echo, '{model_id}', '{revision}']}\n" +
		"matrix: {model_id: [tiny, small]}\nparams: {revision: " + secret + "}\n" +
		"load: {warmup_iterations: 0, measurement_iterations: 2}\n"
	os.WriteFile(filepath.Join(dir, "benches", "sec.yaml"), []byte(def), 0o644)
	rc, otlpURL := otlptest.Start(t)
	srv := mlflowtest.Start(t)
	env := []string{"HF_TOKEN=" + secret, "MLFLOW_TRACKING_URI=" + srv.URL}
	code, out, errOut := runCLI(t, dir, env, "run", "--set", "model_id="+secret, "--no-monitor", "--output-dir", "out",
		"--store", "h.db", "--otlp-endpoint", otlpURL+"/v1/traces", "--export", "mlflow")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	check := func(where, text string) {
		t.Helper()
		if i := strings.Index(text, secret); i >= 0 {
			t.Errorf("%s holds the secret: %q", where, text[max(0, i-200):i+len(secret)])
		}
	}
	check("stdout", out)
	check("stderr", errOut)
	for _, format := range []string{"gobench", "github-action-benchmark"} {
		code, exp, expErr := runCLI(t, dir, env, "export", "out/latest", "--format", format)
		if code != ExitOK {
			t.Errorf("export %s: exit %d %s", format, code, expErr)
		}
		check("export --format "+format, exp)
	}
	files := map[string]bool{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, "benches") {
			return err
		}
		data, _ := os.ReadFile(p)
		check(p, string(data))
		files[filepath.Base(p)] = true
		return nil
	})
	for _, f := range []string{"run.json", "run.log", "summary.csv", "report.html", "benchmark_summary.json", "m.json", "h.db"} {
		if !files[f] {
			t.Errorf("no %s written (files: %v)", f, files)
		}
	}
	spans := rc.Spans()
	if len(spans) == 0 {
		t.Error("no span received")
	}
	for _, s := range spans {
		check("span "+s.Name, fmt.Sprint(s))
	}
	runs := srv.Runs()
	if len(runs) == 0 {
		t.Error("no MLflow run received")
	}
	for _, r := range runs {
		check("mlflow run "+r.Name, fmt.Sprint(r.Name, r.Tags, r.Params, r.Metrics))
		for name, a := range r.Artifacts {
			check("mlflow artifact "+name, string(a))
		}
	}
}
