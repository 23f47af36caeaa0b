package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/internal/testkit/schematest"
	"github.com/inferbench/inferbench/result"
)

var update = flag.Bool("update", false, "rewrite golden files")

// run runs the command line in-process in dir and returns the exit code, stdout and stderr.
func runCLI(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	base := []string{"CI=1", "PATH=" + os.Getenv("PATH")}
	if dir == "" {
		// Without a project directory the default store would land in the package directory.
		base = append(base, "INFERBENCH_STORE=sqlite:"+testStore(t))
	}
	code := Main(context.Background(), args, IO{Stdout: &out, Stderr: &errOut, Env: append(base, env...), Dir: dir})
	return code, out.String(), errOut.String()
}

// testdata is the absolute testdata directory (tests change directory).
var testdata, _ = filepath.Abs("testdata")

var testStores sync.Map // test name -> store path, one store per test

func testStore(t *testing.T) string {
	if p, ok := testStores.Load(t.Name()); ok {
		return p.(string)
	}
	p := filepath.Join(t.TempDir(), "history.db")
	testStores.Store(t.Name(), p)
	return p
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(testdata, name+".golden")
	if *update {
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	t.Chdir("testdata/broken")
	code, out, errOut := runCLI(t, "", nil, "validate")
	if code != ExitUsage {
		t.Errorf("exit %d, want %d", code, ExitUsage)
	}
	golden(t, "validate-broken", out+errOut)
}

func TestListGolden(t *testing.T) {
	t.Chdir("testdata/project")
	code, out, errOut := runCLI(t, "", nil, "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "list", out)
	_, out, _ = runCLI(t, "", []string{"INFERBENCH_TEST_GATE=1"}, "list", "--enable-mock", "--tag", "fast", "--include", "*/batch_size=2")
	golden(t, "list-filtered", out)
}

func TestUsageErrors(t *testing.T) {
	t.Chdir("testdata/project")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"run", "--format", "xml"}, `invalid argument "xml" for "--format" flag: want text, json or none`},
		{[]string{"run", "--include", "nothing-matches"}, "--include nothing-matches: no benchmark or scenario has this name"},
		{[]string{"run", "--set", "novalue"}, `--set "novalue": want key=value`},
		{[]string{"frobnicate"}, "unknown command"},
	}
	for _, c := range cases {
		code, _, errOut := runCLI(t, "", nil, c.args...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

var (
	timing   = regexp.MustCompile(`(?m)^(\S+/\S+\s+ok\s+)\d+\s+.*$`)
	resultL  = regexp.MustCompile(`results: .*`)
	warningL = regexp.MustCompile(`(?m)^(warning|note) .*\n`)
	spaces   = regexp.MustCompile(` +`)
)

func TestRunWritesResults(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "", nil, "run", filepath.Join(testdata, "project"), "--enable-mock", "--output-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	// The table's figures vary; its shape does not.
	shape := timing.ReplaceAllString(out, "${1}<figures>")
	shape = resultL.ReplaceAllString(shape, "results: <dir>")
	shape = strings.ReplaceAll(shape, dir+string(filepath.Separator), "<dir>/")
	shape = regexp.MustCompile(`[0-9]{8}_[0-9]{6}-[a-z0-9]+`).ReplaceAllString(shape, "<id>")
	shape = warningL.ReplaceAllString(shape, "")
	shape = spaces.ReplaceAllString(shape, " ")
	golden(t, "run-table", shape)

	latest := filepath.Join(dir, result.LatestLink)
	data, err := os.ReadFile(filepath.Join(latest, result.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	schematest.ValidateRun(t, data)
	var r result.Run
	json.Unmarshal(data, &r)
	if r.Partial || r.Summary != (result.Summary{Total: 4, Succeeded: 3, Skipped: 1, SuccessRate: 1}) {
		t.Errorf("summary %+v partial %v", r.Summary, r.Partial)
	}
	csv, _ := os.ReadFile(filepath.Join(latest, "summary.csv"))
	if lines := strings.Count(string(csv), "\n"); lines != 5 {
		t.Errorf("summary.csv has %d lines, want header + 4", lines)
	}
	if !strings.HasPrefix(string(csv), "benchmark,scenario,model,framework,device,device_type,batch_size,dtype,input_shape,latency_p50_ms,latency_p95_ms,latency_p99_ms,latency_mean_ms,latency_std_ms,latency_min_ms,latency_max_ms,throughput_ips,memory_mb,compilation_time_ms,status,timestamp,git_commit\n") {
		t.Errorf("summary.csv header: %q", strings.SplitN(string(csv), "\n", 2)[0])
	}
	log, _ := os.ReadFile(filepath.Join(latest, result.LogFile))
	if !strings.Contains(string(log), "run finished") {
		t.Errorf("run.log: %s", log)
	}
}

func TestRunFailedScenarioExitsOne(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "", nil, "run", "--exec", "sh -c 'echo boom >&2; exit 4'", "--iterations", "2", "--warmup", "0", "--output-dir", dir, "--format", "none")
	if code != ExitError {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	r, err := result.Load(filepath.Join(dir, result.LatestLink))
	if err != nil {
		t.Fatal(err)
	}
	s := r.Scenarios[0]
	if s.Status != result.StatusFailed || !strings.Contains(s.Errors[0].Error, "stderr: boom") || !strings.Contains(s.Errors[0].Error, "exit status 4") {
		t.Errorf("%+v", s)
	}
}

func TestExecMetricsFromStdout(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCLI(t, "", nil, "run", "--exec", `sh -c 'echo noise; echo "{\"latency_ms\": 2.5, \"items\": 4, \"accuracy\": 0.9}"'`,
		"--exec-metrics", "--iterations", "3", "--warmup", "0", "--output-dir", dir, "--format", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	r, _ := result.Load(filepath.Join(dir, result.LatestLink))
	m := r.Scenarios[0].Metrics
	if m["latency_ms"].Summary.Median != 2.5 || m["harness_latency_ms"].Summary == nil || m["accuracy"].Summary.Median != 0.9 {
		t.Errorf("metrics: latency %+v harness %+v accuracy %+v", m["latency_ms"].Summary, m["harness_latency_ms"].Summary, m["accuracy"])
	}
}

func TestSysinfoJSON(t *testing.T) {
	code, out, _ := runCLI(t, "", nil, "sysinfo", "--json")
	var info map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &info) != nil {
		t.Fatalf("exit %d, output %q", code, out)
	}
	for _, k := range []string{"os", "arch", "cpu", "go"} {
		if _, ok := info[k]; !ok {
			t.Errorf("sysinfo --json lacks %q", k)
		}
	}
}
