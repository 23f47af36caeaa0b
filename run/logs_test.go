package run

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/result"
)

// secret is a value the run is told is secret; it must appear in no file the run writes.
const secret = "hunter2-very-secret"

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runProject runs every benchmark under dir at debug level and returns the run, its folder and
// what the console got.
func runProject(t *testing.T, dir string) (*result.Run, string, string) {
	t.Helper()
	var console bytes.Buffer
	out := filepath.Join(t.TempDir(), "results")
	r, err := Run(context.Background(), Options{
		Selection: Selection{Paths: []string{dir}}, OutputDir: out, NoStore: true, Format: "none",
		Monitor: Monitor{Off: true}, Secrets: []string{secret}, Dir: dir,
		Log:      slog.NewTextHandler(&console, &slog.HandlerOptions{Level: slog.LevelDebug}),
		LogLevel: slog.LevelDebug,
	})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, console.String())
	}
	return r, filepath.Join(out, r.ID), console.String()
}

// scenarioLog returns the text of the scenario's output log, checking it is listed in run.json.
func scenarioLog(t *testing.T, runDir string, s result.Scenario, want string) string {
	t.Helper()
	if len(s.Logs) != 1 || s.Logs[0] != want {
		t.Fatalf("%s: logs %q, want [%s]", s.ID(), s.Logs, want)
	}
	b, err := os.ReadFile(filepath.Join(runDir, s.Logs[0]))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestScenarioOutputKept: a command's stdout and stderr were read for its metrics and the tail of
// a failure's stderr, then dropped; a successful scenario left nothing to read. Now each
// scenario's output is kept in logs/BENCH__SCENARIO.log, listed in run.json, redacted.
func TestScenarioOutputKept(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "benches", "echo.yaml"), `name: echo
subject:
  kind: exec
  command: |
    echo "hello from the benchmark"; echo "password=`+secret+`" >&2; echo "api_key=sk-abcdefghijklmnop" >&2
  shell: true
load: {warmup_iterations: 1, measurement_iterations: 3}
`)
	r, runDir, console := runProject(t, dir)
	s := r.Scenarios[0]
	if s.Status != result.StatusOK {
		t.Fatalf("status %s: %s", s.Status, s.Error)
	}
	text := scenarioLog(t, runDir, s, "logs/echo__default.log")
	if n := strings.Count(text, "hello from the benchmark\n"); n != 4 {
		t.Errorf("the log holds %d of the 4 calls' stdout lines:\n%s", n, text)
	}
	if !strings.Contains(text, "password="+redact.Mask) || strings.Contains(text, "sk-abcdefghijklmnop") {
		t.Errorf("the log is not redacted:\n%s", text)
	}
	html, _ := os.ReadFile(filepath.Join(runDir, "report.html"))
	if !strings.Contains(string(html), `href="logs/echo__default.log"`) {
		t.Errorf("report.html does not link the scenario's log")
	}
	assertNoSecret(t, runDir, console)
}

// assertNoSecret checks every file of the run folder and the console for the secret.
func assertNoSecret(t *testing.T, runDir, console string) {
	t.Helper()
	if strings.Contains(console, secret) {
		t.Errorf("the console shows the secret")
	}
	filepath.WalkDir(runDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds the secret", p)
			}
		}
		return nil
	})
}

// TestDebugLogSaysWhatHappens: --log-level debug logged each scenario's definition and little
// else. Now run.log and the console say where discovery looked and what it found, how the
// subject was set up, what the load driver decided and why it stopped; every record redacted.
func TestDebugLogSaysWhatHappens(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "benches", "unit", "echo.yaml"), `name: echo
subject: {kind: exec, command: ["echo", "`+secret+`"]}
load: {warmup_iterations: 2, measurement_iterations: 3}
`)
	writeFile(t, filepath.Join(dir, "benches", "notes.txt"), "not a definition")
	_, runDir, console := runProject(t, dir)
	logText, err := os.ReadFile(filepath.Join(runDir, result.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`level=DEBUG msg=discovery roots=\[\S+\] rule="looked below`,
		`level=DEBUG msg="discovery: definition file" file=\S+/benches/unit/echo.yaml`,
		`level=DEBUG msg="discovery: files found" n=1 `,
		`level=DEBUG msg="selected benchmark" benchmark=echo source=\S+echo.yaml:1 subject=exec scenarios=1`,
		`level=DEBUG msg="opening subject" scenario=echo/default kind=exec `,
		`level=DEBUG msg="exec command" scenario=echo/default argv="echo xxxxx" `,
		`level=DEBUG msg="subject opened" scenario=echo/default kind=exec load_time=\S+ abilities=none`,
		`level=DEBUG msg=warm-up scenario=echo/default iterations=2`,
		`level=DEBUG msg=measuring scenario=echo/default iterations=3 `,
		`level=DEBUG msg="measurement stopped" scenario=echo/default why="reached the iterations asked and min_time" iterations=3 `,
		`level=DEBUG msg="load done" scenario=echo/default warmup=2 measured=3 failed=0 `,
	} {
		re := regexp.MustCompile(want)
		if !re.Match(logText) {
			t.Errorf("run.log lacks %s", want)
		}
		if !re.MatchString(console) {
			t.Errorf("the console lacks %s", want)
		}
	}
	if strings.Index(string(logText), "msg=discovery") > strings.Index(string(logText), `msg="run started"`) {
		t.Errorf("run.log: discovery is written after the run started")
	}
	assertNoSecret(t, runDir, console)
}

// TestWorkerOutputKept: a Python benchmark's print() and logging output, written while the
// worker protocol runs on the same process's stdout, is kept in the scenario's log, and the
// protocol is not disturbed by it.
func TestWorkerOutputKept(t *testing.T) {
	py := pyenv.Find(nil).Path
	if _, err := exec.LookPath(py); err != nil {
		t.Skipf("%s is not installed: worker processes cannot run", py)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "benches", "chatty.py"), `import logging
import sys

log = logging.getLogger("chatty")


def run_chatty():
    print("printed by the benchmark")
    log.warning("logged by the benchmark, token=`+secret+`")
    sys.stdout.write("written to sys.stdout\n")
    return {"items": 1}
`)
	r, runDir, console := runProject(t, dir)
	s := r.Scenarios[0]
	if s.Status != result.StatusOK {
		t.Fatalf("status %s: %s", s.Status, s.Error)
	}
	text := scenarioLog(t, runDir, s, "logs/"+strings.ReplaceAll(s.ID(), "/", "__")+".log")
	for _, want := range []string{"printed by the benchmark\n", "logged by the benchmark, token=" + redact.Mask, "written to sys.stdout\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("the worker's log lacks %q:\n%s", want, text)
		}
	}
	if !regexp.MustCompile(`level=DEBUG msg="worker request" scenario=\S+ worker=pyfunc op=setup id=2 line=`).MatchString(console) ||
		!regexp.MustCompile(`level=DEBUG msg="worker reply" scenario=\S+ worker=pyfunc op=run id=\d+ after=\S+ bytes=\d+ line=`).MatchString(console) {
		t.Errorf("the debug log lacks the protocol messages:\n%s", console)
	}
	assertNoSecret(t, runDir, console)
}
