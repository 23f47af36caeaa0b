package exec

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/subject"
)

// TestMetricsItems checks the item count a command reports on its last line: a negative,
// fractional or absurd count is an error naming it, not a number of items (int(-1e300) is
// whatever the platform makes of it).
func TestMetricsItems(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, tc := range []struct{ line, want string }{
		{`{"items": 4, "latency_ms": 2}`, ""},
		{`{"items": -1}`, "items = -1 is not a count"},
		{`{"items": 2.5}`, "items = 2.5 is not a count"},
		{`{"items": 1e300}`, "items = 1e+300 is not a count"},
	} {
		s, err := Open(context.Background(), subject.Spec{Config: &Config{Command: []any{"sh", "-c", "echo '" + tc.line + "'"}, Metrics: "json"}})
		if err != nil {
			t.Fatal(err)
		}
		o, err := s.Do(context.Background(), subject.Request{})
		if tc.want == "" {
			if err != nil || o.Items != 4 {
				t.Errorf("%s: items %d, err %v", tc.line, o.Items, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.line, err, tc.want)
		}
	}
}

// TestParamNotShell runs the battery's injection: a parameter substituted into a script that a
// shell runs (`shell: true`, a list with `sh -c`) is one word of data, never shell syntax.
func TestParamNotShell(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, tc := range []struct {
		name    string
		command any
		shell   bool
	}{
		// shell: true with a string command
		{"shell string", "echo {p} > out.txt", true},
		// shell: true with a list (joined, then run by sh)
		{"shell list", []any{"sh", "-c", "echo {p} > out.txt"}, true},
		// an explicit `sh -c` in a list, no shell key
		{"sh -c list", []any{"sh", "-c", "echo {p} > out.txt"}, false},
		// bash with an option before -c
		{"bash -e -c", []any{"bash", "-e", "-c", "echo {p} > out.txt"}, false},
	} {
		if _, err := exec.LookPath("bash"); err != nil && tc.name == "bash -e -c" {
			continue
		}
		dir := t.TempDir()
		value := "x; touch PWNED"
		s, err := Open(context.Background(), subject.Spec{Dir: dir, Config: &Config{Command: tc.command, Shell: tc.shell}, Params: subject.Params{"p": value}})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if _, err := s.Do(context.Background(), subject.Request{}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
			t.Errorf("%s: the parameter ran as shell: PWNED created", tc.name)
		}
		out, err := os.ReadFile(filepath.Join(dir, "out.txt"))
		if err != nil || strings.TrimSpace(string(out)) != value {
			t.Errorf("%s: out.txt = %q (%v), want the value %q", tc.name, out, err, value)
		}
	}
	// A plain word stays as it is, inside quotes too.
	argv, err := BuildArgv("echo '{p}' {q}", true, subject.Params{"p": "qwen-7b", "q": 8})
	if err != nil || argv[2] != "echo 'qwen-7b' 8" {
		t.Errorf("plain words: %q %v", argv, err)
	}
}
