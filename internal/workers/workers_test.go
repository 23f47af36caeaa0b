package workers

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPythonPath(t *testing.T) {
	base := t.TempDir()
	dir, err := PythonPath(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"__init__.py", "protocol.py", "noop.py", "torch_vision.py"} {
		if _, err := os.Stat(filepath.Join(dir, Package, f)); err != nil {
			t.Errorf("unpacked package lacks %s: %v", f, err)
		}
	}
	if !slices.Contains(Files(), "inferbench_worker/pyfunc.py") {
		t.Errorf("Files() = %v, lacks pyfunc.py", Files())
	}
	again, err := PythonPath(base)
	if err != nil || again != dir {
		t.Errorf("second PythonPath = %q, %v; want %q", again, err, dir)
	}
	entries, _ := os.ReadDir(base)
	if len(entries) != 1 {
		t.Errorf("base holds %d entries, want the one unpacked copy", len(entries))
	}

	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("/usr/bin/python3 is not installed: cannot import the unpacked package")
	}
	cmd := exec.Command("/usr/bin/python3", "-m", Package)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir, "PYTHONDONTWRITEBYTECODE=1")
	cmd.Stdin = strings.NewReader(`{"id":1,"op":"hello","adapter":"noop"}` + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("running the unpacked worker: %v", err)
	}
	if !strings.Contains(string(out), `"ok":true`) {
		t.Errorf("hello reply = %s", out)
	}
}
