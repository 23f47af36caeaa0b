package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// TestImportAgentsMerge: a serving tool's results from two client machines that loaded one server
// together (vLLM's detailed file of 24 requests, split into the even and the odd ones) import as
// the two agents of a group, and `inferbench merge --group` combines them exactly: the merged
// TTFT and ITL percentiles are those of the whole file's requests (histogram buckets added, at
// their three significant digits), not an average of the two files' percentiles. Before, an
// imported run was no agent and merge refused it.
func TestImportAgentsMerge(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	whole, err := filepath.Abs("../serveimport/testdata/vllm/detailed.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	data, err := os.ReadFile(whole)
	if err != nil || json.Unmarshal(data, &doc) != nil {
		t.Fatalf("%s: %v", whole, err)
	}
	var parts []string
	for k := range 2 {
		half := map[string]any{}
		for key, v := range doc {
			xs, ok := v.([]any)
			if !ok {
				half[key] = v
				continue
			}
			var mine []any
			for i, x := range xs {
				if i%2 == k {
					mine = append(mine, x)
				}
			}
			half[key] = mine
		}
		half["num_prompts"], half["completed"] = len(half["ttfts"].([]any)), len(half["ttfts"].([]any))
		b, _ := json.Marshal(half)
		p := filepath.Join(dir, []string{"client-a.json", "client-b.json"}[k])
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	// The whole file as the one agent of its group, merged the same way: the reference.
	merge := func(group string, files ...string) *result.Run {
		t.Helper()
		args := append([]string{"import", "--store", db, "--agents", fmt.Sprint(len(files)), "--group", group}, files...)
		if code, _, errOut := runCLI(t, dir, nil, args...); code != 0 {
			t.Fatalf("import %v: exit %d: %s", files, code, errOut)
		}
		out := filepath.Join(dir, group)
		if code, stdout, errOut := runCLI(t, dir, nil, "merge", "--group", group, "--store", db, "--output-dir", out, "--no-html-report"); code != 0 {
			t.Fatalf("merge --group %s: exit %d:\n%s%s", group, code, stdout, errOut)
		}
		r, err := result.Load(filepath.Join(out, result.LatestLink, result.RunFile))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Scenarios) != 1 || r.Merged == nil || r.Merged.Kind != "agents" || r.Merged.Count != len(files) {
			t.Fatalf("merged run of %s: %d scenarios, merge %+v", group, len(r.Scenarios), r.Merged)
		}
		return r
	}
	ref, merged := merge("one-client", whole), merge("two-clients", parts...)
	m, w := merged.Scenarios[0].Metrics, ref.Scenarios[0].Metrics
	for _, name := range []string{"ttft_ms", "itl_ms", "e2e_ms"} {
		ms, ws := m[name].Summary, w[name].Summary
		if ms == nil || ws == nil || ms.N != ws.N {
			t.Fatalf("%s: merged %+v, whole %+v", name, ms, ws)
		}
		for _, q := range [][2]float64{{ms.Median, ws.Median}, {ms.P99, ws.P99}, {ms.Mean, ws.Mean}, {ms.Max, ws.Max}} {
			if math.Abs(q[0]-q[1]) > 1e-9*q[1] {
				t.Errorf("%s: two clients merged %.6f, the whole file %.6f: want the union's figure", name, q[0], q[1])
			}
		}
	}
	// A file of another format cannot be an agent; --agents wants its group and a file each.
	for _, args := range [][]string{{"--agents", "2", parts[0]}, {"--agents", "2", "--group", "g", parts[0]}, {"--agent", "1", parts[0]}} {
		if code, _, errOut := runCLI(t, dir, nil, append([]string{"import", "--store", db}, args...)...); code != ExitUsage || !strings.Contains(errOut, "--agent") {
			t.Errorf("import %v: exit %d, %q; want a usage error naming the flag", args, code, errOut)
		}
	}
}

// report --report-as honours -o (the table is written there, not to stdout) and refuses an
// explicit --format html, which it cannot write; compare --report-as refuses JSON before it
// compares. Before, -o and --format html were ignored.
func TestReportAsFlags(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	fixture, _ := filepath.Abs("../serveimport/testdata/vllm/detailed.json")
	for _, id := range []string{"a", "b"} {
		if code, _, errOut := runCLI(t, dir, nil, "import", "--store", db, "--id", id, fixture); code != 0 {
			t.Fatalf("import: exit %d: %s", code, errOut)
		}
	}
	out := filepath.Join(dir, "as.txt")
	code, stdout, errOut := runCLI(t, dir, nil, "report", "a", "--store", db, "--report-as", "vllm", "-o", out)
	written, _ := os.ReadFile(out)
	if code != 0 || !strings.Contains(string(written), "mean_ttft_ms") || strings.Contains(stdout, "mean_ttft_ms") {
		t.Errorf("report --report-as -o: exit %d, file %q, stdout %q, %s", code, written, stdout, errOut)
	}
	if code, _, errOut := runCLI(t, dir, nil, "report", "a", "--store", db, "--report-as", "vllm", "--format", "html"); code != ExitUsage || !strings.Contains(errOut, "--format html") {
		t.Errorf("report --report-as --format html: exit %d, %q; want a usage error", code, errOut)
	}
	if code, _, errOut := runCLI(t, dir, nil, "compare", "a", "b", "--store", db, "--report-as", "vllm", "--format", "json"); code != ExitUsage || !strings.Contains(errOut, "--report-as") {
		t.Errorf("compare --report-as --format json: exit %d, %q; want a usage error", code, errOut)
	}
}
