package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTerminalInert: a parameter's control characters reach neither the terminal nor a text
// report as they are: the matrix value "\x1b[2J" (clear the screen) is shown as `\x1b[2J`, in
// the scenario's name on stdout, in summary.csv and on stderr. Before, they were printed raw.
func TestTerminalInert(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "benches"), 0o755)
	def := "name: esc\nsubject: {kind: exec, command: [\"true\"]}\nmatrix: {v: [\"\\e[2J\\e]0;pwned\\a\", \"ok\\rFAILED\"]}\nload: {warmup_iterations: 0, measurement_iterations: 1}\n"
	os.WriteFile(filepath.Join(dir, "benches", "esc.yaml"), []byte(def), 0o644)
	code, out, errOut := runCLI(t, dir, nil, "run", "--no-monitor", "--output-dir", "out", "--store", "h.db")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "out", "latest", "summary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{"stdout": out, "stderr": errOut, "summary.csv": string(csv)} {
		if strings.ContainsAny(text, "\x1b\x07\r") {
			t.Errorf("%s holds a control character: %q", where, text)
		}
	}
	if !strings.Contains(out, `v=\x1b[2J\x1b]0;pwned\x07`) || !strings.Contains(out, `v=ok\rFAILED`) {
		t.Errorf("stdout does not show the names escaped:\n%s", out)
	}
	// A benchmark's name with a control character is refused, with its line.
	os.WriteFile(filepath.Join(dir, "benches", "esc.yaml"), []byte("name: \"a\\e[2Jb\"\nsubject: {kind: exec, command: [\"true\"]}\n"), 0o644)
	code, _, errOut = runCLI(t, dir, nil, "validate")
	if code != ExitUsage || !strings.Contains(errOut, `esc.yaml:1:7: name "a\x1b[2Jb" may not contain '/', spaces or control characters`) {
		t.Errorf("validate: exit %d, %q", code, errOut)
	}
}
