package cli

import (
	"os"
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
// changes" in its last line only, then 0 with UNTESTED. Now the headline (the first line, the
// last line's verdict, the markdown status) says UNTESTED, compare exits 1 saying there are too
// few samples to test and how many are needed (issue 45), and --strict fails it (exit 3) with the
// reason in the error.
func TestUntestedChangeIsNotSilent(t *testing.T) {
	dir := t.TempDir()
	old := execRun1(t, dir, "old", `{"latency_ms": 10}`)
	nw := execRun1(t, dir, "new", `{"latency_ms": 100}`)

	code, out, errOut := runCLI(t, "", nil, "compare", old, nw)
	if code != ExitError {
		t.Fatalf("compare: exit %d, want 1 without --strict\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "UNTESTED: 1 gated change(s) beyond threshold could not be tested") {
		t.Errorf("headline %q: want UNTESTED first\n%s", lines[0], out)
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "UNTESTED: 0 regressions") {
		t.Errorf("last line %q: want the verdict UNTESTED, not ok", last)
	}
	if !strings.Contains(errOut, "too few samples to test: 1 gated change(s)") || !strings.Contains(errOut, "at least 4 samples a side") {
		t.Errorf("stderr %q: want too few samples to test, and how many are needed", errOut)
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

// TestStrictDefinitionKey: `strict: true` in a definition is --strict for its scenarios: the
// battery's 10x change with one iteration a side fails (exit 3) with the reason in the headline
// and the exit status's text, while a benchmark without the key is undecided (exit 1: too few
// samples to test).
func TestStrictDefinitionKey(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "benches"), 0o755); err != nil {
		t.Fatal(err)
	}
	def := func(name, strict string) string {
		return "name: " + name + "\nsubject: {kind: exec, command: [sh, -c, 'echo \"{\\\"latency_ms\\\": ${W}}\"'], metrics: json}\n" + strict
	}
	os.WriteFile(filepath.Join(dir, "benches", "s.yaml"), []byte(def("s", "strict: true\n")), 0o644)
	os.WriteFile(filepath.Join(dir, "benches", "l.yaml"), []byte(def("l", "")), 0o644)
	runOnce := func(bench, w string) string {
		t.Helper()
		out := filepath.Join(dir, bench+w)
		code, _, errOut := runCLI(t, dir, []string{"W=" + w}, "run", "benches/"+bench+".yaml", "--no-monitor", "--iterations", "1", "--warmup", "0", "--output-dir", out, "--format", "none", "--no-store")
		if code != ExitOK {
			t.Fatalf("run %s W=%s: exit %d\n%s", bench, w, code, errOut)
		}
		return filepath.Join(out, result.LatestLink)
	}
	code, out, errOut := runCLI(t, dir, nil, "compare", runOnce("s", "10"), runOnce("s", "100"))
	if code != ExitRegression {
		t.Fatalf("strict definition, 10 → 100 untested: exit %d, want %d\n%s%s", code, ExitRegression, out, errOut)
	}
	if !strings.HasPrefix(out, "FAIL: 0 regressions, 0 budgets exceeded, 1 untested changes beyond threshold (strict: in the definition)") {
		t.Errorf("headline:\n%s", out)
	}
	if !strings.Contains(errOut, "1 untested changes beyond threshold (strict: in the definition)") {
		t.Errorf("the exit status's text %q does not say why", errOut)
	}
	if code, out, errOut := runCLI(t, dir, nil, "compare", runOnce("l", "10"), runOnce("l", "100")); code != ExitError || !strings.HasPrefix(out, "UNTESTED") || !strings.Contains(errOut, "too few samples to test") {
		t.Errorf("no strict key: exit %d, want 1 with UNTESTED and too few samples\n%s%s", code, out, errOut)
	}
	// The key is a boolean, checked where it is written.
	os.WriteFile(filepath.Join(dir, "benches", "s.yaml"), []byte(def("s", "strict: yes please\n")), 0o644)
	if code, _, errOut := runCLI(t, dir, []string{"W=1"}, "validate"); code != ExitUsage || !strings.Contains(errOut, "s.yaml:3") {
		t.Errorf("strict: yes please: exit %d, want %d naming s.yaml:3\n%s", code, ExitUsage, errOut)
	}
}
