package cli

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferbench/inferbench/alert"
	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/history"
	"github.com/inferbench/inferbench/internal/stage/recovery"
	"github.com/inferbench/inferbench/internal/testkit/storetest"
	"github.com/inferbench/inferbench/result"
)

// saveRun writes a synthetic run folder under dir and returns its path.
func saveRun(t *testing.T, dir, id string, seed uint64, center float64) string {
	t.Helper()
	r := storetest.MakeRun(id, storetest.T0.Add(time.Duration(seed)*time.Hour), seed, center, []string{"resnet"}, 2, 30)
	p := filepath.Join(dir, "benchmark_results", id)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := result.Save(p, r); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompareCommand(t *testing.T) {
	dir := t.TempDir()
	saveRun(t, dir, "old", 1, 10)
	saveRun(t, dir, "same", 2, 10)
	saveRun(t, dir, "slow", 3, 13)
	summary := filepath.Join(dir, "summary.md")

	code, out, errOut := runCLI(t, dir, []string{"GITHUB_STEP_SUMMARY=" + summary}, "compare", "old", "slow")
	if code != ExitRegression || !strings.Contains(out, "REGRESSION") || !strings.Contains(out, "FAIL: 2 regressions") {
		t.Errorf("compare old slow: exit %d, want 3 with two latency regressions\n%s%s", code, out, errOut)
	}
	if md, _ := os.ReadFile(summary); !strings.Contains(string(md), "❌ 2 regression(s)") || !strings.Contains(string(md), "| Scenario | Status | Latency (median)") {
		t.Errorf("step summary:\n%s", md)
	}

	code, out, errOut = runCLI(t, dir, nil, "compare", "benchmark_results/old/run.json", "benchmark_results/same", "--format", "json")
	var rep compare.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != ExitOK || rep.Regressions != 0 || len(rep.Rows) == 0 {
		t.Errorf("compare old same --format json: exit %d err %v rows %d\n%s%s", code, err, len(rep.Rows), out, errOut)
	}

	code, out, _ = runCLI(t, dir, nil, "compare", "old", "slow", "--format", "junit", "--threshold", "latency=50")
	var suites struct {
		Failures int `xml:"failures,attr"`
		Tests    int `xml:"tests,attr"`
	}
	if err := xml.Unmarshal([]byte(out), &suites); err != nil || code != ExitOK || suites.Failures != 0 || suites.Tests == 0 {
		t.Errorf("junit with latency=50: exit %d, %+v, %v\n%s", code, suites, err, out)
	}

	// A budget file makes an otherwise clean comparison fail.
	os.WriteFile(filepath.Join(dir, budgetFileName), []byte("budgets:\n  resnet:\n    max_latency_ms: 5\n"), 0o644)
	code, out, _ = runCLI(t, dir, nil, "compare", "old", "same", "--format", "markdown")
	if code != ExitRegression || !strings.Contains(out, "Budgets exceeded") {
		t.Errorf("compare with a budget of 5 ms: exit %d\n%s", code, out)
	}
	os.Remove(filepath.Join(dir, budgetFileName))

	cases := []struct {
		name string
		args []string
		code int
	}{
		{"unknown run", []string{"compare", "old", "nope"}, ExitError},
		{"bad format", []string{"compare", "old", "same", "--format", "xml"}, ExitUsage},
		{"bad threshold", []string{"compare", "old", "same", "--threshold", "latency"}, ExitUsage},
		{"one argument", []string{"compare", "old"}, ExitUsage},
	}
	for _, c := range cases {
		if code, out, errOut := runCLI(t, dir, nil, c.args...); code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", c.name, code, c.code, out, errOut)
		}
	}
	// benchmark_thresholds.json is read from the project.
	os.WriteFile(filepath.Join(dir, thresholdsFileName), []byte(`{"latency_regression_threshold": 40, "percent": true}`), 0o644)
	if code, out, _ := runCLI(t, dir, nil, "compare", "old", "slow"); code != ExitOK {
		t.Errorf("with a 40%% latency threshold from %s: exit %d\n%s", thresholdsFileName, code, out)
	}
	os.WriteFile(filepath.Join(dir, thresholdsFileName), []byte(`{"latency": 40}`), 0o644)
	if code, _, errOut := runCLI(t, dir, nil, "compare", "old", "slow"); code != ExitUsage || !strings.Contains(errOut, thresholdsFileName+":1:2: unknown key \"latency\"") {
		t.Errorf("unknown key in %s: exit %d, %s", thresholdsFileName, code, errOut)
	}
}

func TestBaselineAndHistoryCommands(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 12; i++ {
		center := 10.0
		if i >= 6 {
			center = 12
		}
		id := "r" + string(rune('a'+i))
		saveRun(t, dir, id, uint64(i), center)
		if code, out, errOut := runCLI(t, dir, nil, "import", "benchmark_results/"+id+"/run.json", "--id", id); code != ExitOK {
			t.Fatalf("import %s: exit %d\n%s%s", id, code, out, errOut)
		}
	}
	if code, out, errOut := runCLI(t, dir, nil, "baseline", "set", "main", "ra", "--note", "first"); code != ExitOK || !strings.Contains(out, "baseline main = run ra") {
		t.Fatalf("baseline set: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := runCLI(t, dir, nil, "baseline", "list"); code != ExitOK || !strings.Contains(out, "main") || !strings.Contains(out, "first") {
		t.Errorf("baseline list: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, dir, nil, "baseline", "show", "main"); code != ExitOK || !strings.Contains(out, "resnet/batch_size=1") {
		t.Errorf("baseline show: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, dir, nil, "baseline", "show", "nope"); code != ExitError || !strings.Contains(errOut, "baseline set nope") {
		t.Errorf("baseline show nope: exit %d, %s", code, errOut)
	}
	if code, out, _ := runCLI(t, dir, nil, "compare", "baseline:main", "latest"); code != ExitRegression {
		t.Errorf("compare baseline:main latest (+20%%): exit %d, want 3\n%s", code, out)
	}
	code, out, errOut := runCLI(t, dir, nil, "history", "resnet", "--metric", "latency_ms.p50", "--days", "0", "--scenario", "batch_size=1")
	if code != ExitOK || !strings.Contains(out, "change point at run rg") || !strings.Contains(out, "12 points") {
		t.Errorf("history: exit %d, want a change point at run rg\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, dir, nil, "history", "--json", "--days", "0", "--metric", "latency_ms")
	var series []history.Series
	if err := json.Unmarshal([]byte(out), &series); err != nil || code != ExitOK || len(series) != 2 || len(series[0].ChangePoints) != 1 || series[0].ChangePoints[0].Magnitude < 0.15 {
		t.Errorf("history --json: exit %d, err %v, %d series\n%s", code, err, len(series), out)
	}
	if code, out, _ := runCLI(t, dir, nil, "history", "--runs", "--days", "0"); code != ExitOK || strings.Count(out, "\n") != 13 {
		t.Errorf("history --runs: exit %d, want 12 runs\n%s", code, out)
	}
	if code, _, _ := runCLI(t, dir, nil, "history", "--metric", "latency_ms.p42"); code != ExitUsage {
		t.Errorf("history --metric latency_ms.p42: exit %d, want 2", code)
	}
}

func TestImportExport(t *testing.T) {
	dir := t.TempDir()
	var gob strings.Builder
	gob.WriteString("goos: linux\ncommit: abc123\n")
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 10; i++ {
		gob.WriteString("BenchmarkTokenize/len=64-8\t1000\t" + fmtF(1000+rng.Float64()*50) + " ns/op\t64 B/op\t2 allocs/op\n")
	}
	os.WriteFile(filepath.Join(dir, "bench.txt"), []byte(gob.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "pytest.json"), []byte(`{"datetime": "2026-03-01T12:00:00.000000", "commit_info": {"id": "def456", "branch": "main"},
		"benchmarks": [{"group": null, "name": "test_infer[bs8]", "fullname": "tests/test_x.py::test_infer[bs8]", "params": {"bs": 8},
		"stats": {"min": 0.001, "max": 0.002, "mean": 0.0015, "stddev": 0.0001, "median": 0.0015, "q1": 0.0014, "q3": 0.0016, "rounds": 5, "ops": 666, "data": [0.001, 0.0015, 0.0016, 0.0014, 0.002]}}]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "hf.json"), []byte(`{"results": [{"command": "sleep 0.1", "mean": 0.1, "stddev": 0.001, "median": 0.1, "min": 0.099, "max": 0.102, "times": [0.1, 0.099, 0.101, 0.102]}]}`), 0o644)
	for _, c := range []struct{ file, id, wantScenario string }{
		{"bench.txt", "go1", "Tokenize/len=64"},
		{"pytest.json", "py1", "test_infer/bs8"},
		{"hf.json", "hf1", "hf/sleep 0.1"},
	} {
		code, out, errOut := runCLI(t, dir, nil, "import", c.file, "--id", c.id)
		if code != ExitOK || strings.TrimSpace(out) != c.id {
			t.Fatalf("import %s: exit %d\n%s%s", c.file, code, out, errOut)
		}
		code, out, errOut = runCLI(t, dir, nil, "export", c.id, "--format", "github-action-benchmark")
		var entries []struct{ Name string }
		if err := json.Unmarshal([]byte(out), &entries); err != nil || code != ExitOK || len(entries) == 0 || !strings.HasPrefix(entries[0].Name, c.wantScenario+" ") {
			t.Errorf("export %s: exit %d, %v, %+v\n%s", c.id, code, err, entries, errOut)
		}
	}
	code, out, _ := runCLI(t, dir, nil, "export", "go1")
	if code != ExitOK || strings.Count(out, "BenchmarkTokenize/len=64\t1\t") != 30 || strings.Count(out, " B/op\n") != 10 || !strings.Contains(out, "# inferbench run go1 at commit abc123") || strings.Contains(out, "commit: ") {
		t.Errorf("export go1 --format gobench: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, dir, nil, "import", "nope.txt"); code == ExitOK {
		t.Errorf("import of a missing file succeeded: %s", errOut)
	}
	os.WriteFile(filepath.Join(dir, "junk.json"), []byte(`{"x": 1}`), 0o644)
	if code, _, errOut := runCLI(t, dir, nil, "import", "junk.json"); code != ExitUsage || !strings.Contains(errOut, "unknown tool") {
		t.Errorf("import junk.json: exit %d %s", code, errOut)
	}
}

func fmtF(v float64) string { b, _ := json.Marshal(v); return string(b) }

func TestRunRecordsBudgetsAndAlerts(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	type slackMessage struct { // the webhook's JSON body
		Text    string         `json:"text"`
		Run     string         `json:"run"`
		Firings []alert.Firing `json:"firings"`
	}
	var posted []slackMessage
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m slackMessage
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &m)
		mu.Lock()
		posted = append(posted, m)
		mu.Unlock()
	}))
	defer hook.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 500) }))
	defer failing.Close()
	args := []string{"run", "--exec", "true", "--iterations", "5", "--warmup", "0", "--no-html-report", "--no-monitor"}

	// First run: recorded, baseline not set yet (a warning, not a failure), an alert posted.
	code, out, errOut := runCLI(t, dir, []string{alert.WebhookEnv + "=" + hook.URL}, append(args, "--baseline", "main", "--alert", "latency_ms.p50 > 0")...)
	if code != ExitOK || !strings.Contains(errOut, `baseline "main" is not set`) {
		t.Fatalf("first run: exit %d\n%s%s", code, out, errOut)
	}
	mu.Lock()
	if len(posted) != 1 || !strings.Contains(posted[0].Text, "latency_ms.p50") || len(posted[0].Firings) != 1 {
		t.Errorf("webhook got %+v, want one message with the firing", posted)
	}
	mu.Unlock()
	if code, out, _ := runCLI(t, dir, nil, "baseline", "set", "main"); code != ExitOK {
		t.Fatalf("baseline set main: %d %s", code, out)
	}
	// A failing webhook never fails the run.
	code, out, errOut = runCLI(t, dir, []string{alert.WebhookEnv + "=" + failing.URL}, append(args, "--alert", "latency_ms.p50 > 0", "--threshold", "latency=100000", "--baseline", "main")...)
	if code != ExitOK || !strings.Contains(errOut, "alerts not delivered") || !strings.Contains(out, "compared with baseline main") {
		t.Errorf("run with a failing webhook: exit %d, want 0 with a warning\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "benchmark_results", "latest", recovery.CompareJSONFile)); err != nil {
		t.Errorf("run --baseline left no %s: %v", recovery.CompareJSONFile, err)
	}
	// A budget exceeded exits 3, with or without a baseline.
	os.WriteFile(filepath.Join(dir, budgetFileName), []byte("budgets:\n  exec:\n    max_latency_ms: 0.000001\n"), 0o644)
	if code, out, errOut := runCLI(t, dir, nil, args...); code != ExitRegression || !strings.Contains(out, "BUDGET EXCEEDED") {
		t.Errorf("run over budget: exit %d, want 3\n%s%s", code, out, errOut)
	}
	if code, out, _ := runCLI(t, dir, nil, "history", "--runs", "--days", "0"); code != ExitOK || strings.Count(out, "\n") != 4 {
		t.Errorf("history --runs after three runs:\n%s", out)
	}
	if code, _, _ := runCLI(t, dir, nil, append(args, "--alert", "latency_ms.p50 >> 3")...); code != ExitUsage {
		t.Errorf("bad alert rule: exit %d, want 2", code)
	}
}
