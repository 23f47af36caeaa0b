package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// TestPipedRunIsQuiet: piped or in CI, a run printed an INFO line per scenario start and end on
// stderr (146 lines for the demo). Now stdout carries the table and stderr only warnings and
// errors; run.log keeps the full log, and --log-level debug says what happens in it.
func TestPipedRunIsQuiet(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "", nil, "run", filepath.Join(testdata, "project"), "--enable-mock", "--output-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if errOut != "" {
		t.Errorf("stderr of a quiet piped run: %q, want nothing", errOut)
	}
	shape := timing.ReplaceAllString(out, "${1}<figures>")
	shape = resultL.ReplaceAllString(shape, "results: <dir>")
	shape = strings.ReplaceAll(shape, dir+string(filepath.Separator), "<dir>/")
	shape = regexp.MustCompile(`[0-9]{8}_[0-9]{6}-[a-z0-9]+`).ReplaceAllString(shape, "<id>")
	shape = warningL.ReplaceAllString(shape, "")
	shape = spaces.ReplaceAllString(shape, " ")
	golden(t, "run-piped", "--- stdout\n"+shape+"--- stderr\n"+errOut)
	logText, err := os.ReadFile(filepath.Join(dir, result.LatestLink, result.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(logText), `msg="scenario done"`); n != 4 {
		t.Errorf("run.log has %d 'scenario done' lines, want 4:\n%s", n, logText)
	}

	// --log-level debug: the console and run.log say what each scenario is.
	dir = t.TempDir()
	code, out, errOut = runCLI(t, "", nil, "run", filepath.Join(testdata, "project"), "--enable-mock", "--output-dir", dir, "--log-level", "debug")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !regexp.MustCompile(`level=DEBUG msg="scenario definition" scenario="quick-mock/batch_size=1" source=\S+quick.yaml:1 `).MatchString(errOut) {
		t.Errorf("--log-level debug: stderr lacks the scenario's definition:\n%s", errOut)
	}
	logText, _ = os.ReadFile(filepath.Join(dir, result.LatestLink, result.LogFile))
	if !strings.Contains(string(logText), "level=DEBUG") {
		t.Errorf("--log-level debug: run.log has no debug records")
	}
}

// TestLogLevelHelp: run --help showed --log-level (default "info") while the console's default
// is warnings and errors only; the help says what the default is, and --log-level info still
// shows info on the console.
func TestLogLevelHelp(t *testing.T) {
	code, out, errOut := runCLI(t, "", nil, "run", "--help")
	var line string
	for _, l := range strings.Split(out+errOut, "\n") {
		if strings.Contains(l, "--log-level") {
			line = l
		}
	}
	if code != 0 || line == "" || strings.Contains(line, `(default "info")`) || !strings.Contains(line, "default: warnings and errors only") {
		t.Errorf("run --help: exit %d, --log-level line %q", code, line)
	}
	code, out, errOut = runCLI(t, "", nil, "run", filepath.Join(testdata, "project"), "--enable-mock", "--output-dir", t.TempDir(), "--log-level", "info")
	if code != 0 || !strings.Contains(errOut, "level=INFO") {
		t.Errorf("--log-level info: exit %d, stderr lacks INFO lines:\n%s\n%s", code, out, errOut)
	}
}
