package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pytestJSON is a pytest-benchmark JSON document of the tests given as fullname -> params, with
// five rounds each around ms milliseconds.
func pytestJSON(t *testing.T, path string, tests [][2]any, group string, ms float64) {
	t.Helper()
	var benches []map[string]any
	for i, tc := range tests {
		full, params := tc[0].(string), tc[1]
		name := full[strings.LastIndex(full, "::")+2:]
		base := (ms + float64(i)) / 1e3
		data := []float64{base, base * 1.01, base * 0.99, base * 1.02, base * 0.98}
		var g any
		if group != "" {
			g = group
		}
		benches = append(benches, map[string]any{"group": g, "name": name, "fullname": full, "params": params,
			"stats": map[string]any{"min": base * 0.98, "max": base * 1.02, "mean": base, "stddev": base / 100, "median": base,
				"q1": base * 0.99, "q3": base * 1.01, "rounds": 5, "ops": 1 / base, "data": data}})
	}
	b, err := json.Marshal(map[string]any{"datetime": "2026-03-01T12:00:00.000000", "benchmarks": benches})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImportKeepsTestIdentity is issue 46's reproduction: pint's registry tests are parametrized
// by `key` (a unit's name) and `unit`; the import masked `key` as a secret, learnt its values
// and masked them inside the other parameters (kilometer/second -> xxxxx/xxxxx), so that
// different tests shared one matching key and were compared with one another's baselines. Now
// every test keeps its parameters and is matched to itself; two tests of one name and parameters
// in different modules, or of one group parametrized alike, are two scenarios; a value of the
// environment's secrets, or of a parameter declared with --secret-param, is masked whole; and a
// comparison that would pair different tests refuses and says which.
func TestImportKeepsTestIdentity(t *testing.T) {
	dir := t.TempDir()
	tests := [][2]any{
		{"test_10_registry.py::test_getattr[kilometer]", map[string]any{"key": "kilometer"}},
		{"test_10_registry.py::test_getattr[second]", map[string]any{"key": "second"}},
		{"test_10_registry.py::test_getattr[angstrom]", map[string]any{"key": "angstrom"}},
		{"test_10_registry.py::test_convert[kilometer/second]", map[string]any{"unit": "kilometer/second"}},
		{"test_10_registry.py::test_convert[angstrom/minute]", map[string]any{"unit": "angstrom/minute"}},
		{"test_10_registry.py::test_token[hello]", map[string]any{"token": "hello-world"}},
		{"tests/a.py::test_same[1]", map[string]any{"n": 1}},
		{"tests/b.py::test_same[1]", map[string]any{"n": 1}},
		{"test_model.py::test_load[hub]", map[string]any{"model": "org/envsecret123-7b"}},
	}
	env := []string{"HF_TOKEN=envsecret123"}
	pytestJSON(t, filepath.Join(dir, "old.json"), tests, "", 1)
	pytestJSON(t, filepath.Join(dir, "new.json"), tests, "", 1)
	for _, id := range []string{"old", "new"} {
		if code, out, errOut := runCLI(t, dir, env, "import", id+".json", "--id", id); code != ExitOK {
			t.Fatalf("import %s: exit %d\n%s%s", id, code, out, errOut)
		}
	}
	code, out, errOut := runCLI(t, dir, env, "report", "new", "--format", "json")
	if code != ExitOK {
		t.Fatalf("report: exit %d\n%s", code, errOut)
	}
	var run struct {
		Scenarios []struct {
			Benchmark, Scenario string
			Params              map[string]any
		}
	}
	if err := json.Unmarshal([]byte(out), &run); err != nil {
		t.Fatal(err)
	}
	params := map[string]string{}
	for _, s := range run.Scenarios {
		b, _ := json.Marshal(s.Params)
		params[s.Benchmark+"/"+s.Scenario] = string(b)
	}
	for id, want := range map[string]string{
		"test_getattr/kilometer":        `{"key":"kilometer"}`,
		"test_convert/kilometer/second": `{"unit":"kilometer/second"}`,
		"test_token/hello":              `{"token":"hello-world"}`,
		"tests/a.py::test_same/1":       `{"n":1}`,
		"tests/b.py::test_same/1":       `{"n":1}`,
		"test_load/hub":                 `{"model":"xxxxx"}`, // holds $HF_TOKEN's value: masked whole
		"test_convert/angstrom/minute":  `{"unit":"angstrom/minute"}`,
		"test_getattr/second":           `{"key":"second"}`,
		"test_getattr/angstrom":         `{"key":"angstrom"}`,
	} {
		if params[id] != want {
			t.Errorf("%s: params %s, want %s (all: %v)", id, params[id], want, params)
		}
	}

	code, out, errOut = runCLI(t, dir, env, "compare", "old", "new", "--format", "json")
	if code != ExitOK {
		t.Fatalf("compare: exit %d\n%s%s", code, out, errOut)
	}
	var rep struct {
		Rows []struct {
			Benchmark, Scenario, Metric string
			Old, New                    float64
		}
		OnlyOld []string `json:"only_old"`
		OnlyNew []string `json:"only_new"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	matched := map[string]bool{}
	for _, r := range rep.Rows {
		if r.Metric != "latency_ms" {
			continue
		}
		// Each test's old median is its own (the files give test i a median of 1+i ms).
		if r.Old != r.New {
			t.Errorf("%s/%s compared with another test's baseline: old %v, new %v", r.Benchmark, r.Scenario, r.Old, r.New)
		}
		matched[r.Benchmark+"/"+r.Scenario] = true
	}
	if len(matched) != len(tests) || len(rep.OnlyOld)+len(rep.OnlyNew) > 0 {
		t.Errorf("%d of %d tests matched (only old %v, only new %v): %v", len(matched), len(tests), rep.OnlyOld, rep.OnlyNew, matched)
	}

	// Declared secret, `key` is masked whole, and so is each parameter holding one of its values
	// (unit 'kilometer/second'): tests now share keys, and the comparison refuses (exit 1) naming
	// two of them, instead of pairing them with one baseline.
	for _, id := range []string{"old2", "new2"} {
		if code, out, errOut := runCLI(t, dir, env, "import", strings.TrimSuffix(id, "2")+".json", "--id", id, "--secret-param", "key"); code != ExitOK {
			t.Fatalf("import %s: exit %d\n%s%s", id, code, out, errOut)
		}
	}
	code, out, errOut = runCLI(t, dir, env, "compare", "old2", "new2")
	if code != ExitError || !strings.Contains(out+errOut, "different scenarios with one matching key") || !strings.Contains(out+errOut, "xxxxx") {
		t.Errorf("compare of runs whose tests share a key: exit %d, want %d and the refusal\n%s%s", code, ExitError, out, errOut)
	}
	if strings.Contains(out+errOut, "envsecret123") {
		t.Errorf("the environment's secret is in the output:\n%s%s", out, errOut)
	}
}

// TestImportGroupParametrizedAlike: two tests of one group parametrized alike (pytest-benchmark's
// group "parse": test_a[1], test_b[1]) are two scenarios of their own, each matched to itself.
func TestImportGroupParametrizedAlike(t *testing.T) {
	dir := t.TempDir()
	tests := [][2]any{
		{"t.py::test_a[1]", map[string]any{"n": 1}},
		{"t.py::test_b[1]", map[string]any{"n": 1}},
	}
	pytestJSON(t, filepath.Join(dir, "g.json"), tests, "parse", 2)
	for _, id := range []string{"g1", "g2"} {
		if code, out, errOut := runCLI(t, dir, nil, "import", "g.json", "--id", id); code != ExitOK {
			t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
		}
	}
	code, out, errOut := runCLI(t, dir, nil, "compare", "g1", "g2", "--format", "json")
	if code != ExitOK || strings.Count(out, `"metric": "latency_ms"`) != 2 {
		t.Errorf("compare: exit %d, want 2 latency rows\n%s%s", code, out, errOut)
	}
}

// TestRunKeepsScenarioIdentity: a definition's matrix parameter named like a secret (key) keeps
// its values in run.json and never masks them inside another parameter; declared with
// --secret-param its values are masked whole and learnt (an echo of one is masked too).
func TestRunKeepsScenarioIdentity(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "benches"), 0o755)
	def := "name: units\nsubject: {kind: exec, command: [sh, -c, 'echo {key} {unit} >&2']}\n" +
		"matrix: {key: [kilometer, second], unit: [kilometer/second]}\nload: {warmup_iterations: 0, measurement_iterations: 2}\n"
	os.WriteFile(filepath.Join(dir, "benches", "units.yaml"), []byte(def), 0o644)
	load := func(out string) map[string]string {
		t.Helper()
		var r struct {
			Scenarios []struct {
				Scenario string
				Params   map[string]any
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, out, "latest", "run.json"))
		if err != nil || json.Unmarshal(b, &r) != nil {
			t.Fatalf("run.json: %v", err)
		}
		got := map[string]string{}
		for _, s := range r.Scenarios {
			p, _ := json.Marshal(s.Params)
			got[s.Scenario] = string(p)
		}
		return got
	}
	if code, out, errOut := runCLI(t, dir, nil, "run", "--no-monitor", "--output-dir", "plain", "--no-store"); code != ExitOK {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	got := load("plain")
	want := map[string]string{`{"key":"kilometer","unit":"kilometer/second"}`: "", `{"key":"second","unit":"kilometer/second"}`: ""}
	if len(got) != 2 {
		t.Fatalf("scenarios %v, want 2", got)
	}
	for sc, p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("scenario %s: params %s, want the values as defined", sc, p)
		}
	}
	code, out, errOut := runCLI(t, dir, nil, "run", "--no-monitor", "--output-dir", "declared", "--no-store", "--secret-param", "key")
	if code != ExitOK {
		t.Fatalf("run --secret-param key: exit %d\n%s%s", code, out, errOut)
	}
	for sc, p := range load("declared") {
		if !strings.Contains(p, `"key":"xxxxx"`) || strings.Contains(sc+p+out+errOut, "kilometer") {
			t.Errorf("declared: scenario %s params %s (the key's values masked whole and learnt)", sc, p)
		}
	}
}
