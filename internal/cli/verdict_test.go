package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/result"
)

// execRun runs a command through --exec --exec-metrics into dir/name and returns the folder.
func execRun(t *testing.T, dir, name, line string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	code, _, errOut := runCLI(t, "", nil, "run", "--exec", "echo '"+line+"'", "--exec-metrics", "--no-monitor",
		"--iterations", "12", "--warmup", "0", "--output-dir", out, "--format", "none")
	if code != 0 {
		t.Fatalf("run %s: exit %d: %s", name, code, errOut)
	}
	return filepath.Join(out, result.LatestLink)
}

// Seed 000's format: a benchmark returning {"throughput": 1000} that improves by 26% passes the
// gate, and compare says throughput is higher-is-better. Failed before: exit 3, "REGRESSION".
func TestCompareSeedThroughputImproves(t *testing.T) {
	dir := t.TempDir()
	old := execRun(t, dir, "old", `{"throughput": 1000}`)
	nw := execRun(t, dir, "new", `{"throughput": 1260}`)
	// The harness's own latency of echo is noise here: only throughput is judged.
	code, out, errOut := runCLI(t, "", nil, "compare", old, nw, "--threshold", "latency=100000")
	if code != ExitOK || !strings.Contains(out, "improvement") || strings.Contains(out, "REGRESSION") {
		t.Fatalf("compare: exit %d, want 0 with an improvement\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "throughput") || !strings.Contains(out, "higher") {
		t.Errorf("compare does not show throughput as higher-is-better:\n%s", out)
	}
}

// A figure may declare its unit and direction in the command's JSON line; a metric with no known
// direction is reported as changed and never fails the gate.
func TestCompareDeclaredAndUnknownDirections(t *testing.T) {
	dir := t.TempDir()
	old := execRun(t, dir, "old", `{"recall_at_k_loss": {"value": 0.5, "better": "higher", "unit": "ratio"}, "widgets": 10}`)
	nw := execRun(t, dir, "new", `{"recall_at_k_loss": {"value": 0.6, "better": "higher", "unit": "ratio"}, "widgets": 30}`)
	r, err := result.Load(old)
	if err != nil {
		t.Fatal(err)
	}
	if m := r.Scenarios[0].Metrics["recall_at_k_loss"]; m.Better != "higher" || m.Unit != "ratio" {
		t.Errorf("declared metric recorded as %+v, want unit ratio, higher", m)
	}
	if m := r.Scenarios[0].Metrics["widgets"]; m.Better != "" {
		t.Errorf("widgets recorded with direction %q, want none", m.Better)
	}
	code, out, errOut := runCLI(t, "", nil, "compare", old, nw, "--threshold", "latency=100000")
	if code != ExitOK || !strings.Contains(out, "changed (direction unknown") || !strings.Contains(out, "no known better direction") {
		t.Fatalf("compare: exit %d, want 0 with widgets changed and not gated\n%s%s", code, out, errOut)
	}
}

// An interval that is infinite (five samples give a median interval with no lower end) is written
// as null in compare's JSON (docs/results.md). Failed before: exit 1, "json: unsupported value:
// -Inf".
func TestCompareJSONInfiniteInterval(t *testing.T) {
	dir := t.TempDir()
	runs := make([]string, 2)
	for i, name := range []string{"old", "new"} {
		out := filepath.Join(dir, name)
		code, _, errOut := runCLI(t, "", nil, "run", "--exec", "true", "--no-monitor",
			"--iterations", "5", "--warmup", "0", "--output-dir", out, "--format", "none")
		if code != 0 {
			t.Fatalf("run %s: exit %d: %s", name, code, errOut)
		}
		runs[i] = filepath.Join(out, result.LatestLink)
	}
	code, out, errOut := runCLI(t, "", nil, "compare", runs[0], runs[1], "--format", "json", "--threshold", "latency=1000")
	if code != ExitOK && code != ExitRegression {
		t.Fatalf("compare --format json: exit %d\n%s", code, errOut)
	}
	var rep struct {
		Rows []struct {
			Metric string `json:"metric"`
			OldCI  *struct {
				Lo *float64 `json:"lo"`
				Hi *float64 `json:"hi"`
			} `json:"old_ci"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("compare --format json wrote no JSON: %v\n%s", err, out)
	}
	nulls := 0
	for _, r := range rep.Rows {
		if r.OldCI != nil && r.OldCI.Lo == nil && r.OldCI.Hi != nil {
			nulls++
		}
	}
	if nulls == 0 {
		t.Errorf("no row has an interval with a null lower end:\n%s", out)
	}
}

// compare --json writes the comparison's JSON beside the text table, from one comparison: the
// pytest plugin compared twice (JSON, then text) and so bootstrapped every tail twice.
func TestCompareJSONBesideText(t *testing.T) {
	dir := t.TempDir()
	runs := make([]string, 2)
	for i, name := range []string{"old", "new"} {
		out := filepath.Join(dir, name)
		code, _, errOut := runCLI(t, "", nil, "run", "--exec", "true", "--no-monitor",
			"--iterations", "12", "--warmup", "0", "--output-dir", out, "--format", "none")
		if code != 0 {
			t.Fatalf("run %s: exit %d: %s", name, code, errOut)
		}
		runs[i] = filepath.Join(out, result.LatestLink)
	}
	js := filepath.Join(dir, "compare.json")
	code, out, errOut := runCLI(t, "", nil, "compare", runs[0], runs[1], "--json", js, "--threshold", "latency=100000")
	if code != ExitOK {
		t.Fatalf("compare --json: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "latency_ms") || strings.HasPrefix(strings.TrimSpace(out), "{") {
		t.Errorf("stdout is not the text table:\n%s", out)
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Regressions *int `json:"regressions"`
		Rows        []struct {
			Metric string `json:"metric"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(data, &rep); err != nil || rep.Regressions == nil || len(rep.Rows) == 0 {
		t.Fatalf("--json wrote no comparison (%v):\n%s", err, data)
	}
}

// The seed's budget keys on a real command run: max_memory_mb bounds the command's peak RSS
// (peak_rss_mb) when the subject reports no memory_mb of its own.
// Failed before: "memory_mb.max <= 1: not measured", exit 0. With the monitors off, the keys
// only they answer (max_cpu_percent) are named in a warning, not passed in silence.
func TestBudgetFileOnExecRun(t *testing.T) {
	dir := t.TempDir()
	bf := filepath.Join(dir, "budget.yml")
	if err := os.WriteFile(bf, []byte("budgets:\n  exec: {max_memory_mb: 1, max_cpu_percent: 100000, max_latency_ms: 100000}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--exec", "true", "--iterations", "12", "--warmup", "0", "--budget-file", bf, "--format", "table"}
	code, out, errOut := runCLI(t, "", nil, append(args, "--output-dir", filepath.Join(dir, "on"))...)
	all := out + errOut
	if code != ExitRegression || !strings.Contains(all, "BUDGET EXCEEDED exec/default peak_rss_mb = ") || strings.Contains(all, "not measured") {
		t.Errorf("max_memory_mb 1 on a command: exit %d, want 3 with peak_rss_mb exceeded and every budget measured\n%s", code, all)
	}
	// The budget lines name the file given, not the default name.
	if !strings.Contains(all, "("+bf+")") || strings.Contains(all, budgetFileName) {
		t.Errorf("--budget-file %s: the budget lines do not name it\n%s", bf, all)
	}
	// With the monitors off, the command's own peak RSS (the exec subject's, from the kernel) is
	// still measured; the process tree's CPU is not.
	code, out, errOut = runCLI(t, "", nil, append(args, "--no-monitor", "--output-dir", filepath.Join(dir, "off"))...)
	all = out + errOut
	if code != ExitRegression || !strings.Contains(all, "BUDGET EXCEEDED exec/default peak_rss_mb = ") {
		t.Errorf("--no-monitor, max_memory_mb 1: exit %d, want 3 with the command's own peak_rss_mb exceeded\n%s", code, all)
	}
	for _, metric := range []string{"cpu_pct"} {
		want := regexp.MustCompile(`warning: budget exec/default ` + regexp.QuoteMeta(metric) + ` <= [0-9.]+ \(.*\) not measured, so not checked: .*--no-monitor`)
		if !want.MatchString(all) {
			t.Errorf("--no-monitor: exit %d, no line matching %s\n%s", code, want, all)
		}
	}
}

// compare shows the primary rows by default and every row with --all-metrics.
func TestCompareAllMetrics(t *testing.T) {
	dir := t.TempDir()
	old := execRun(t, dir, "old", `{"throughput": 1000}`)
	nw := execRun(t, dir, "new", `{"throughput": 1010}`)
	code, out, errOut := runCLI(t, "", nil, "compare", old, nw, "--threshold", "latency=100000")
	if code != ExitOK || !strings.Contains(out, "throughput") || strings.Contains(out, "success_rate") ||
		!regexp.MustCompile(`\(\d+ rows of secondary metrics, none failing, not shown: --all-metrics shows them\)`).MatchString(out) {
		t.Errorf("compare: exit %d, want 0 with throughput, without success_rate (a secondary row that cannot fail), and the count of rows not shown\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", nil, "compare", old, nw, "--threshold", "latency=100000", "--all-metrics")
	if code != ExitOK || !strings.Contains(out, "throughput") || !strings.Contains(out, "success_rate") || strings.Contains(out, "not shown") {
		t.Errorf("compare --all-metrics: exit %d, want 0 with every row (success_rate too) and none hidden\n%s%s", code, out, errOut)
	}
}

// Seed 003's overhead budget between two scenarios of one run, through the run pipeline: the
// definition's ratio budget is checked when the run ends, exceeded exits 3 with the budget line,
// within it exits 0.
func TestRatioBudgetThroughRun(t *testing.T) {
	for _, c := range []struct {
		slow string // the ms of the scenario divided by ms=10
		code int
		line string
	}{
		{"12", ExitRegression, "BUDGET EXCEEDED cmd/ms=12 ÷ ms=10 ratio(ms=12/ms=10).latency_ms.p50 = 1.20"},
		{"10.2", ExitOK, ""},
	} {
		dir := t.TempDir()
		def := filepath.Join(dir, "cmd.yaml")
		body := "name: cmd\nsubject: {kind: exec, command: [\"echo\", \"{\\\"latency_ms\\\": {ms}}\"], metrics: json}\n" +
			"matrix:\n  ms: [10, " + c.slow + "]\nload: {warmup_iterations: 0, measurement_iterations: 10}\n" +
			"budgets:\n  \"ratio(ms=" + c.slow + "/ms=10).latency_ms.p50\": \"<= 1.05\"\n"
		if err := os.WriteFile(def, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runCLI(t, "", nil, "run", def, "--no-monitor", "--output-dir", filepath.Join(dir, "out"))
		all := out + errOut
		if code != c.code {
			t.Errorf("ms=%s over ms=10, budget <= 1.05: exit %d, want %d\n%s", c.slow, code, c.code, all)
		}
		if c.line != "" && !strings.Contains(all, c.line) {
			t.Errorf("ms=%s: no %q\n%s", c.slow, c.line, all)
		}
		if c.line == "" && (strings.Contains(all, "BUDGET") || strings.Contains(all, "not measured")) {
			t.Errorf("ms=%s: a budget line for a ratio within its budget\n%s", c.slow, all)
		}
		if !strings.Contains(all, "budgets: 1 checked") {
			t.Errorf("ms=%s: the ratio budget was not counted as checked\n%s", c.slow, all)
		}
	}
}

// A worker declares the unit and direction of a figure its benchmark returns (the pyfunc
// adapter's reply carries "metrics", docs/worker-protocol.md): the declaration reaches run.json
// through Worker.Declared and the engine, and compare gates on it when asked (--gate widgets:
// only latency_ms gates a worker by default). "widgets" has no direction by its name; declared
// higher-is-better, a fall from 1000 to 800 is a regression.
func TestWorkerDeclaredMetricReachesCompare(t *testing.T) {
	py := pyenv.Find(nil).Path
	if _, err := exec.LookPath(py); err != nil {
		t.Skipf("%s is not installed: worker processes cannot run", py)
	}
	dir := t.TempDir()
	bench := filepath.Join(dir, "benches", "decl.py")
	if err := os.MkdirAll(filepath.Dir(bench), 0o755); err != nil {
		t.Fatal(err)
	}
	runs := map[string]string{}
	for _, v := range []string{"1000", "800"} {
		src := "def run_widgets():\n    return {\"widgets\": {\"value\": " + v + ", \"unit\": \"items\", \"better\": \"higher\"}}\n"
		if err := os.WriteFile(bench, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out"+v)
		code, _, errOut := runCLI(t, dir, nil, "run", "--no-monitor", "--iterations", "12", "--warmup", "1", "--output-dir", out, "--format", "none")
		if code != ExitOK {
			t.Fatalf("run with widgets %s: exit %d\n%s", v, code, errOut)
		}
		runs[v] = filepath.Join(out, result.LatestLink)
		r, err := result.Load(runs[v])
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Scenarios) != 1 || r.Scenarios[0].Subject != "worker" {
			t.Fatalf("run.json: %+v, want one worker scenario", r.Scenarios)
		}
		if m := r.Scenarios[0].Metrics["widgets"]; m.Unit != "items" || m.Better != "higher" {
			t.Errorf("run.json widgets: unit %q better %q, want the worker's declaration items, higher", m.Unit, m.Better)
		}
	}
	// The worker's own latency is noise here: only widgets is judged.
	code, out, errOut := runCLI(t, dir, nil, "compare", runs["1000"], runs["800"], "--threshold", "latency=100000", "--gate", "widgets")
	if code != ExitRegression || !regexp.MustCompile(`widgets \(items\)\s+higher\s+1000\b.*\s800(\.0)?\b.*-20\.00%.*REGRESSION`).MatchString(out) ||
		!strings.Contains(out, "1 regressions") {
		t.Errorf("compare 1000 → 800 widgets declared higher: exit %d, want 3 with widgets a regression\n%s%s", code, out, errOut)
	}
}
