package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/testkit/mlflowtest"
	"github.com/inferbench/inferbench/result"
)

// runFolder returns the one run folder under out.
func runFolder(t *testing.T, out string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(out, "*", result.RunFile))
	var got []string
	for _, d := range dirs {
		if filepath.Base(filepath.Dir(d)) != result.LatestLink {
			got = append(got, filepath.Dir(d))
		}
	}
	if len(got) != 1 {
		t.Fatalf("run folders under %s: %v, want one", out, got)
	}
	return got[0]
}

// TestExportMLflowCommand: export --format mlflow sends a run folder to the tracking server and
// prints the runs it made; --experiment names the experiment.
func TestExportMLflowCommand(t *testing.T) {
	r, err := result.Load("../../result/testdata/v1/serving.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := result.Save(dir, r); err != nil {
		t.Fatal(err)
	}
	srv := mlflowtest.Start(t)
	code, out, errOut := runCLI(t, "", nil, "export", dir, "--format", "mlflow", "--tracking-uri", srv.URL, "--experiment", "cli")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	runs := srv.Runs()
	if len(runs) != 1+len(r.Scenarios) || srv.Experiment("cli") == "" {
		t.Fatalf("%d runs, experiment cli %q; want 1 + %d runs in it", len(runs), srv.Experiment("cli"), len(r.Scenarios))
	}
	if !strings.Contains(out, "run "+r.ID+": "+runs[0].ID+" "+srv.URL+"/#/experiments/") ||
		!strings.Contains(out, "scenario serving-mock/concurrency=4: ") {
		t.Errorf("stdout does not list the runs made:\n%s", out)
	}
	if len(runs[0].Artifacts[result.RunFile]) == 0 || len(runs[0].Artifacts["summary.csv"]) == 0 {
		t.Errorf("artifacts %v: want run.json and summary.csv", runs[0].Artifacts)
	}
	// A server that fails: exit 1, the error names the URL.
	srv.Fail = "runs/create"
	code, _, errOut = runCLI(t, "", nil, "export", dir, "--format", "mlflow", "--tracking-uri", srv.URL)
	if code != 1 || !strings.Contains(errOut, srv.URL+"/api/2.0/mlflow/runs/create") || !strings.Contains(errOut, "HTTP 500") {
		t.Errorf("failing server: exit %d, stderr %q; want 1 and the URL with HTTP 500", code, errOut)
	}
}

// TestRunExportMLflow: run --export mlflow sends the run after its results are written: the
// run.json the server receives is the run folder's final one, and the run's exit status is its
// own.
func TestRunExportMLflow(t *testing.T) {
	srv := mlflowtest.Start(t)
	out := t.TempDir()
	code, stdout, errOut := runCLI(t, "", []string{"MLFLOW_TRACKING_URI=" + srv.URL}, "run", filepath.Join(testdata, "project"),
		"--enable-mock", "--output-dir", out, "--no-monitor", "--export", "mlflow")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	dir := runFolder(t, out)
	runs := srv.Runs()
	if len(runs) < 2 {
		t.Fatalf("%d runs on the server, want a parent and its scenarios\n%s", len(runs), errOut)
	}
	want, _ := os.ReadFile(filepath.Join(dir, result.RunFile))
	if got := runs[0].Artifacts[result.RunFile]; string(got) != string(want) {
		t.Errorf("run.json sent: %d bytes, want the folder's final %d", len(got), len(want))
	}
	if runs[0].Status != "FINISHED" || !strings.Contains(errOut, "mlflow: experiment \"inferbench\"") {
		t.Errorf("parent %s; stderr %q: want FINISHED and the runs made listed", runs[0].Status, errOut)
	}
}

// TestRunExportDeadTracker: a tracker that cannot be reached is a warning naming it and the
// command that retries; the results are written and the exit status is the run's own, 0 for a
// run that passed and 1 for one whose scenario failed.
func TestRunExportDeadTracker(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{filepath.Join(testdata, "project"), "--enable-mock"}, 0},     // passes
		{[]string{"--exec", "false", "--iterations", "2", "--warmup", "0"}, 1}, // a failed scenario
	} {
		out := t.TempDir()
		args := append(append([]string{"run"}, c.args...), "--output-dir", out, "--no-monitor", "--export", "mlflow,wandb")
		env := []string{"MLFLOW_TRACKING_URI=http://127.0.0.1:1", "INFERBENCH_PYTHON=" + filepath.Join(out, "no-python")}
		code, stdout, errOut := runCLI(t, "", env, args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want the run's own %d\n%s\n%s", c.args, code, c.code, stdout, errOut)
		}
		dir := runFolder(t, out)
		if _, err := result.Load(dir); err != nil {
			t.Errorf("%v: results: %v", c.args, err)
		}
		for _, want := range []string{
			"warning: mlflow export failed", "http://127.0.0.1:1/api/2.0/mlflow/", "retry: inferbench export " + dir + " --format mlflow",
			"warning: wandb export failed", "retry: inferbench export " + dir + " --format wandb",
		} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.args, want, errOut)
			}
		}
	}
}

// TestExportTrackerUsage: --export of a tracker inferbench does not know is a usage error before
// anything runs.
func TestExportTrackerUsage(t *testing.T) {
	out := t.TempDir()
	code, _, errOut := runCLI(t, "", nil, "run", filepath.Join(testdata, "project"), "--enable-mock", "--output-dir", out, "--export", "mlflow,neptune")
	if code != ExitUsage || !strings.Contains(errOut, `--export "neptune"`) {
		t.Errorf("exit %d, stderr %q; want %d naming --export \"neptune\"", code, errOut, ExitUsage)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a usage error ran the scenarios: %v", entries)
	}
}

// TestRunExportSilentTracker: a tracking server that accepts the connection and never answers
// holds the run for the trackers' deadline (2 s by default, as OTLP's and the alerts'), not the
// HTTP client's 30 s, and the warning names the deadline and how to lengthen it; --export-timeout
// and $INFERBENCH_EXPORT_TIMEOUT set it.
func TestRunExportSilentTracker(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	for _, c := range []struct {
		name  string
		flags []string
		env   []string
		want  string
		limit time.Duration // far above the deadline, far below the 30 s it was
	}{
		{"default", nil, nil, "(2s)", 15 * time.Second},
		{"flag", []string{"--export-timeout", "300ms"}, nil, "(300ms)", 10 * time.Second},
		{"env", nil, []string{"INFERBENCH_EXPORT_TIMEOUT=400ms"}, "(400ms)", 10 * time.Second},
	} {
		out := t.TempDir()
		args := append([]string{"run", "--exec", "true", "--iterations", "1", "--warmup", "0", "--output-dir", out, "--no-monitor", "--export", "mlflow"}, c.flags...)
		env := append([]string{"MLFLOW_TRACKING_URI=http://" + l.Addr().String()}, c.env...)
		began := time.Now()
		code, stdout, errOut := runCLI(t, "", env, args...)
		took := time.Since(began)
		if code != 0 {
			t.Errorf("%s: exit %d, want the run's own 0\n%s\n%s", c.name, code, stdout, errOut)
		}
		if took > c.limit {
			t.Errorf("%s: the silent tracker held the run %v", c.name, took)
		}
		for _, want := range []string{"warning: mlflow export failed", "deadline " + c.want, "--export-timeout", "INFERBENCH_EXPORT_TIMEOUT", "retry: inferbench export"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", c.name, want, errOut)
			}
		}
	}
	code, _, errOut := runCLI(t, "", nil, "run", "--exec", "true", "--export", "mlflow", "--export-timeout", "-1s")
	if code != ExitUsage || !strings.Contains(errOut, "--export-timeout") {
		t.Errorf("--export-timeout -1s: exit %d, %q; want a usage error naming the flag", code, errOut)
	}
}
