package recorded

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/serveimport"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/store"
)

const fixtures = "../../serveimport/testdata"

// importServingFile imports one fixture (under a name that says nothing of its tool; AIPerf's
// artifact folder as AIPerf names its files) and returns its run id.
func importServingFile(t *testing.T, dir, db, fixture, id string) string {
	t.Helper()
	sub := filepath.Join(dir, "in-"+id) // not the id: a folder of that name would be the run
	os.MkdirAll(sub, 0o755)
	name := filepath.Join("in-"+id, "results"+filepath.Ext(fixture))
	if strings.HasPrefix(fixture, "aiperf/") {
		name = filepath.Join("in-"+id, filepath.Base(fixture))
		for _, f := range []string{"profile_export.jsonl", "profile_export_aiperf.json"} {
			data, _ := os.ReadFile(filepath.Join(fixtures, "aiperf", f))
			os.WriteFile(filepath.Join(sub, f), data, 0o644)
		}
	} else if data, err := os.ReadFile(filepath.Join(fixtures, fixture)); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	ids, err := Import(context.Background(), ImportOptions{Files: []string{name}, Format: "auto", ID: id, Store: db, Env: run.Env{Dir: dir}, Stdout: &out, Stderr: &errOut})
	if err != nil || len(ids) != 1 {
		t.Fatalf("import %s: %v, %v", fixture, ids, err)
	}
	return ids[0]
}

// Every serving tool's file imports as a run like any other: stored with its origin in its
// environment, compared, trended and reported, and reported by other tools' definitions.
func TestImportServingRuns(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	for _, tc := range []struct{ fixture, id, tool, version string }{
		{"vllm/detailed.json", "v1", "vllm", "not recorded in the file"}, // vLLM writes no version
		{"aiperf/profile_export.jsonl", "a1", "aiperf", "0.13.0"},
		{"guidellm/benchmarks.json", "g1", "guidellm", "0.8.1"},
		{"llm-d/vllm_br0.2.yaml", "l1", "llm-d", "benchmark report 0.2"},
	} {
		importServingFile(t, dir, db, tc.fixture, tc.id)
		st, err := store.Open(ctx, store.Params{URL: db})
		if err != nil {
			t.Fatal(err)
		}
		r, err := st.Get(ctx, tc.id)
		st.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.fixture, err)
		}
		origin, _ := r.Environment["imported"].(map[string]any)
		if origin["tool"] != tc.tool || origin["version"] != tc.version {
			t.Errorf("%s: environment.imported %v: want tool %s, version %s", tc.fixture, origin, tc.tool, tc.version)
		}
		if _, ok := r.Scenarios[0].Extra.Other[serveimport.SectionImported]; !ok {
			t.Errorf("%s: the stored scenario lost the tool's aggregates", tc.fixture)
		}
	}
	if id := importServingFile(t, dir, db, "aiperf/profile_export.jsonl", "a2"); id != "a2" {
		t.Fatal(id)
	}
	// The command line AIPerf recorded beside its records.
	src := &Source{Env: run.Env{Dir: dir}, Store: db}
	defer src.Close()
	r, err := src.Load(ctx, "a1")
	if cmd, _ := r.Environment["imported"].(map[string]any)["command"].(string); err != nil || !strings.Contains(cmd, "aiperf profile --model 'mock'") {
		t.Errorf("a1's command: %v, %v", r.Environment, err)
	}
	var out bytes.Buffer
	rep, err := src.Compare(ctx, "a1", "a2", CompareOptions{Format: "text", Stdout: &out, Stderr: &out, ReportAs: []string{"aiperf"}})
	if err != nil || rep == nil {
		t.Fatalf("compare a1 a2: %v\n%s", err, out.String())
	}
	for _, w := range []string{"ttft_ms", "ok: 0 regressions", "by aiperf's definitions", "time_to_first_token.avg", "+0.0%"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("compare --report-as aiperf: want %q in\n%s", w, out.String())
		}
	}
	out.Reset()
	if err := src.ReportAs(ctx, "v1", []string{"vllm", "guidellm"}, "text", &out); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"from the imported requests' timestamps", "mean_ttft_ms", "p99_itl_ms", "request_throughput", "output_throughput",
		"inter_token_latency_ms.successful.mean", "TTFT mean ms"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("report --report-as vllm,guidellm: want %q in\n%s", w, out.String())
		}
	}
	out.Reset()
	if err := src.ReportAs(ctx, "g1", []string{"vllm"}, "json", &out); err != nil {
		t.Fatal(err)
	}
	var js map[string]map[string][]serveimport.Figure
	if err := json.Unmarshal(out.Bytes(), &js); err != nil || len(js["guidellm/concurrent=4"]["vllm"]) == 0 {
		t.Errorf("report --report-as vllm --format json: %v\n%s", err, out.String())
	}
	// An llm-d report keeps no request: there is nothing to compute other tools' figures from.
	if err := src.ReportAs(ctx, "l1", []string{"vllm"}, "text", &out); !errors.Is(err, serveimport.ErrNoRequests) {
		t.Errorf("report --report-as of an llm-d report: %v, want ErrNoRequests", err)
	}
}

// A bad file of a recognised tool is a usage error naming the file, the tool and where; a file
// of no known tool with --format of a serving tool says what was looked for.
func TestImportServingErrors(t *testing.T) {
	dir := t.TempDir()
	data, _ := os.ReadFile(filepath.Join(fixtures, "aiperf/profile_export.jsonl"))
	os.WriteFile(filepath.Join(dir, "cut.jsonl"), data[:len(data)/2], 0o644)
	os.WriteFile(filepath.Join(dir, "other.json"), []byte(`{"hello": 1}`), 0o644)
	for _, tc := range []struct{ file, format, want string }{
		{"cut.jsonl", "auto", "cut.jsonl: aiperf results: line 12: unexpected end of JSON input"},
		{"other.json", "vllm", "other.json: vllm results: document 1: no key completed"},
		{"other.json", "auto", "JSON of an unknown tool (want pytest-benchmark or hyperfine output, an inferbench run.json, or a serving tool's results"},
	} {
		var out bytes.Buffer
		_, err := Import(context.Background(), ImportOptions{Files: []string{tc.file}, Format: tc.format, Store: filepath.Join(dir, "h.db"), Env: run.Env{Dir: dir}, Stdout: &out, Stderr: &out})
		if err == nil || !errors.Is(err, run.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("import %s --format %s: %v: want a usage error saying %q", tc.file, tc.format, err, tc.want)
		}
	}
}

// An imported run is gated as a run of inferbench's own: the vLLM fixture against a copy whose
// TTFT is half as long again is a regression of ttft_ms.
func TestImportServingGated(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	importServingFile(t, dir, db, "vllm/detailed.json", "base")
	var doc map[string]any
	data, _ := os.ReadFile(filepath.Join(fixtures, "vllm/detailed.json"))
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	ttfts, lats := doc["ttfts"].([]any), doc["latencies"].([]any)
	for i := range ttfts {
		extra := ttfts[i].(float64) / 2
		ttfts[i], lats[i] = ttfts[i].(float64)+extra, lats[i].(float64)+extra
	}
	slow, _ := json.Marshal(doc)
	os.WriteFile(filepath.Join(dir, "slow.json"), slow, 0o644)
	var out bytes.Buffer
	if _, err := Import(ctx, ImportOptions{Files: []string{"slow.json"}, Format: "auto", ID: "slow", Store: db, Env: run.Env{Dir: dir}, Stdout: &out, Stderr: &out}); err != nil {
		t.Fatal(err)
	}
	src := &Source{Env: run.Env{Dir: dir}, Store: db}
	defer src.Close()
	out.Reset()
	rep, err := src.Compare(ctx, "base", "slow", CompareOptions{Format: "text", Stdout: &out, Stderr: &out})
	if !errors.Is(err, run.ErrRegression) || rep == nil || rep.Regressions == 0 || !strings.Contains(out.String(), "ttft_ms") {
		t.Errorf("compare base slow: %v: want a regression of ttft_ms\n%s", err, out.String())
	}
}
