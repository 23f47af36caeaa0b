package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// execRun1 runs a command printing a metrics line once (one iteration, no warm-up) into
// dir/name and returns the folder.
func execRun1(t *testing.T, dir, name, line string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	code, _, errOut := runCLI(t, "", nil, "run", "--exec", "echo '"+line+"'", "--exec-metrics", "--no-monitor",
		"--iterations", "1", "--warmup", "0", "--output-dir", out, "--format", "none")
	if code != 0 {
		t.Fatalf("run %s: exit %d: %s", name, code, errOut)
	}
	return filepath.Join(out, result.LatestLink)
}

// TestUntestedChangeIsNotSilent is the battery's case: a run 10x slower than its baseline with
// one iteration a side cannot be tested. Before, compare exited 0 with "ok" and "1 untested
// changes" in its last line only. Now the headline (the first line, the last line's verdict, the
// markdown status) says UNTESTED, the exit status's text says what exit 0 does not cover, and
// --strict fails it (exit 3) with the reason in the error.
func TestUntestedChangeIsNotSilent(t *testing.T) {
	dir := t.TempDir()
	old := execRun1(t, dir, "old", `{"latency_ms": 10}`)
	nw := execRun1(t, dir, "new", `{"latency_ms": 100}`)

	code, out, errOut := runCLI(t, "", nil, "compare", old, nw)
	if code != ExitOK {
		t.Fatalf("compare: exit %d, want 0 without --strict\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "UNTESTED: 1 gated change(s) beyond threshold could not be tested") {
		t.Errorf("headline %q: want UNTESTED first\n%s", lines[0], out)
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "UNTESTED: 0 regressions") {
		t.Errorf("last line %q: want the verdict UNTESTED, not ok", last)
	}
	if !strings.Contains(errOut, "exit 0, but 1 gated change(s) beyond threshold are untested") || !strings.Contains(errOut, "--strict") {
		t.Errorf("stderr %q: want the exit status's caveat naming --strict", errOut)
	}
	_, md, _ := runCLI(t, "", nil, "compare", old, nw, "--format", "markdown")
	if !strings.Contains(md, "### inferbench: ⚠️ 1 gated change(s) beyond threshold untested") {
		t.Errorf("markdown status does not say untested:\n%s", md)
	}

	code, out, errOut = runCLI(t, "", nil, "compare", old, nw, "--strict")
	if code != ExitRegression {
		t.Fatalf("compare --strict: exit %d, want %d\n%s%s", code, ExitRegression, out, errOut)
	}
	if !strings.HasPrefix(out, "FAIL: 0 regressions, 0 budgets exceeded, 1 untested changes beyond threshold (--strict)") {
		t.Errorf("--strict headline:\n%s", out)
	}
	if !strings.Contains(errOut, "1 untested changes beyond threshold (--strict)") {
		t.Errorf("--strict: the exit status's text %q does not say why", errOut)
	}
	// A tested comparison with nothing beyond threshold is unchanged by --strict.
	same := execRun1(t, dir, "same", `{"latency_ms": 10}`)
	if code, out, errOut := runCLI(t, "", nil, "compare", old, same, "--strict"); code != ExitOK || strings.Contains(out, "UNTESTED") {
		t.Errorf("no change, --strict: exit %d\n%s%s", code, out, errOut)
	}
}
