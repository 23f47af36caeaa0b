package serveimport

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Each tool's file is recognised by its content, whatever its name; other formats' files are
// left to their readers.
func TestDetect(t *testing.T) {
	for _, tc := range []struct{ file, tool string }{
		{"vllm/detailed.json", VLLM}, {"vllm/aggregate.json", VLLM},
		{"aiperf/profile_export_aiperf.json", AIPerf}, {"aiperf/profile_export.jsonl", AIPerf},
		{"guidellm/benchmarks.json", GuideLLM}, {"llm-d/guidellm_br0.2_0.yaml", LLMD}, {"llm-d/vllm_br0.2.yaml", LLMD},
	} {
		data, err := os.ReadFile("testdata/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "renamed.txt") // the name says nothing
		os.WriteFile(p, data, 0o644)
		if got, _, err := Detect(p); err != nil || got != tc.tool {
			t.Errorf("%s: %q, %v: want %s", tc.file, got, err, tc.tool)
		}
	}
	for name, src := range map[string]string{
		"pytest-benchmark": `{"machine_info": {}, "commit_info": {}, "benchmarks": [], "datetime": "x"}`,
		"hyperfine":        `{"results": [{"command": "x"}]}`,
		"gobench":          "BenchmarkX-8   100   12 ns/op\n",
		"inferbench":       `{"schema": "inferbench/run/v1", "scenarios": []}`,
		"yaml of another":  "name: resnet\nload: {mode: single}\n",
	} {
		p := filepath.Join(t.TempDir(), "f")
		os.WriteFile(p, []byte(src), 0o644)
		if got, _, err := Detect(p); err != nil || got != "" {
			t.Errorf("%s: %q, %v: want none of the serving tools", name, got, err)
		}
		if _, ok, err := Read(p, "f", Options{}); ok || err != nil {
			t.Errorf("%s: Read says recognised %v, %v: want false, nil", name, ok, err)
		}
	}
}

// cut writes the first frac of a fixture to a temp file of the same name.
func cut(t *testing.T, file string, frac float64) string {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), filepath.Base(file))
	os.WriteFile(p, data[:int(float64(len(data))*frac)], 0o644)
	return p
}

// write writes src to a temp file named name.
func write(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	os.WriteFile(p, []byte(src), 0o644)
	return p
}

// A bad or truncated file's error names the file, the tool recognised and where: the key, the
// element, the line.
func TestBadFiles(t *testing.T) {
	vllmHead := `{"date": "20261202-033813", "backend": "openai-chat", "model_id": "m", "completed": 2, "duration": 1`
	for _, tc := range []struct {
		name, path, tool string
		want             []string
	}{
		{"vLLM cut in its arrays", cut(t, "vllm/detailed.json", 0.6), "", []string{"detailed.json: vllm results: document 1: key itls", "truncated"}},
		{"vLLM arrays of other lengths", write(t, "v.json", vllmHead+`, "ttfts": [0.1, 0.1], "itls": [[0.01], [0.01]], "start_times": [1.0], "latencies": [0.2, 0.2]}`), "",
			[]string{"v.json: vllm results: document 1: key start_times: 1 elements, key ttfts has more"}},
		{"vLLM element of the wrong type", write(t, "v.json", vllmHead+`, "ttfts": [0.1, "x"], "itls": [[0.01], [0.01]], "start_times": [1.0, 2.0], "latencies": [0.2, 0.2]}`), "",
			[]string{"v.json: vllm results: document 1: key ttfts[1]: json: cannot unmarshal string"}},
		{"vLLM latency that cannot be", write(t, "v.json", vllmHead+`, "ttfts": [0.1], "itls": [[0.01]], "start_times": [1.0], "latencies": [-0.2]}`), "",
			[]string{"v.json: vllm results: document 1: request 0: invalid value"}},
		{"another tool's file as vllm", "testdata/guidellm/benchmarks.json", VLLM, []string{"benchmarks.json: vllm results: document 1: no key completed"}},
		{"AIPerf records cut in a line", cut(t, "aiperf/profile_export.jsonl", 0.5), "", []string{"profile_export.jsonl: aiperf results: line 12: unexpected end of JSON input"}},
		{"AIPerf of another schema", write(t, "p.json", `{"schema_version": "2.0", "aiperf_version": "9.0", "benchmark_id": "x"}`), "",
			[]string{`p.json: aiperf results: key schema_version: "2.0", want 1.x`}},
		{"guidellm cut in its requests", cut(t, "guidellm/benchmarks.json", 0.85), "", []string{"benchmarks.json: guidellm results: key benchmarks[0].requests.successful", "truncated"}},
		{"guidellm of another schema", write(t, "b.json", `{"metadata": {"version": 3, "guidellm_version": "0.9"}, "benchmarks": []}`), "",
			[]string{"b.json: guidellm results: key metadata.version: 3, want 2"}},
		{"llm-d of another version", write(t, "r.yaml", "version: '0.1'\nscenario: {}\nresults: {}\n"), "", []string{`r.yaml: llm-d results: key version: "0.1", want 0.2 or 0.2.1`}},
		{"llm-d with a word for a number", write(t, "r.yaml", "version: '0.2'\nscenario: {}\nresults:\n  request_performance:\n    aggregate:\n      latency:\n        time_to_first_token: {units: ms, mean: fast}\n"), "",
			[]string{"r.yaml: llm-d results: key results.request_performance.aggregate: latency.time_to_first_token.mean: fast is not a number"}},
	} {
		_, _, err := Read(tc.path, filepath.Base(tc.path), Options{Tool: tc.tool, Time: time.Now()})
		var fe *FileError
		if err == nil || !errors.As(err, &fe) {
			t.Errorf("%s: %v: want a FileError", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q: want it to say %q", tc.name, err, w)
			}
		}
	}
}

// A file no reader knows says what was looked for.
func TestUnknown(t *testing.T) {
	err := Unknown("x.json")
	for _, w := range []string{"x.json", "vLLM", "AIPerf", "guidellm", "llm-d benchmark report v0.2"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q: want it to name %q", err, w)
		}
	}
	if !errors.Is(err, ErrUnknown) {
		t.Errorf("%v: want ErrUnknown", err)
	}
}

// vLLM's --append-result (a document a line) and `bench sweep serve`'s summary.json (an array
// of bench serve's documents, with run_number) import a scenario a document, each from its own
// requests.
func TestVLLMSeveralDocuments(t *testing.T) {
	doc, err := os.ReadFile("testdata/vllm/detailed.json")
	if err != nil {
		t.Fatal(err)
	}
	second := strings.Replace(string(doc), `"max_concurrency": 4`, `"max_concurrency": 8`, 1)
	for name, src := range map[string]string{
		"append-result": string(doc) + "\n" + second,
		"sweep summary": "[\n" + strings.Replace(string(doc), "{", `{"run_number": 0, `, 1) + ",\n" + strings.Replace(string(doc), "{", `{"run_number": 1, `, 1) + "]",
	} {
		p := write(t, "summary.json", src)
		if tool, _, _ := Detect(p); tool != VLLM {
			t.Errorf("%s: detected %q, want vllm", name, tool)
		}
		r, _, err := Read(p, "summary.json", Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(r.Scenarios) != 2 || r.Scenarios[0].ID() == r.Scenarios[1].ID() || r.Scenarios[1].Iterations.Measured != 24 {
			t.Errorf("%s: %d scenarios: want 2 of 24 requests, of two names", name, len(r.Scenarios))
		}
	}
}
