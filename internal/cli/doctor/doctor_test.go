package doctor

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/base/pyenv"
)

func TestCheck(t *testing.T) {
	py := pyenv.Find(nil)
	if _, err := exec.LookPath(py.Path); err != nil {
		t.Skipf("no Python interpreter (%s): %v", py.Path, err)
	}
	r := Check(context.Background(), Options{
		Python:   py,
		Required: map[string][]string{"std": {"json"}, "absent": {"json", "inferbench_no_such_module"}, "none": nil},
		Optional: map[string][]string{"std": {"inferbench_no_such_optional"}},
	})
	if r.Error != "" || !strings.HasPrefix(r.Version, "CPython 3.") && !strings.Contains(r.Version, "3.") {
		t.Fatalf("interpreter: %q, error %q", r.Version, r.Error)
	}
	got := map[string]Adapter{}
	for _, a := range r.Adapters {
		got[a.Name] = a
	}
	// an optional module that is missing leaves the adapter ready
	if a := got["std"]; !a.Ready || len(a.Modules) != 2 || a.Modules[0].Version == "" || a.Modules[1].Error == "" || !a.Modules[1].Optional {
		t.Errorf("std: %+v", a)
	}
	if a := got["absent"]; a.Ready || !strings.Contains(a.Modules[1].Error, "ModuleNotFoundError") {
		t.Errorf("absent: %+v", a)
	}
	if a := got["none"]; !a.Ready {
		t.Errorf("an adapter needing nothing: %+v", a)
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{py.Path, "absent", "missing", "inferbench_no_such_module", "(optional)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	// an interpreter that does not exist is reported, not a crash
	r = Check(context.Background(), Options{Python: pyenv.Interpreter{Path: "/nonexistent/python3"}, Required: map[string][]string{"std": {"json"}}})
	if r.Error == "" || r.Adapters[0].Ready {
		t.Errorf("missing interpreter: %+v", r)
	}
}

// doctor says whether instruction mode can run: valgrind's version, or the package to install.
func TestInstructions(t *testing.T) {
	var b bytes.Buffer
	r := Report{Instructions: instructions()}
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "instruction mode (--measure instructions): ") {
		t.Errorf("no instruction mode line:\n%s", b.String())
	}
	t.Setenv("PATH", t.TempDir())
	r = Report{Instructions: instructions()}
	b.Reset()
	r.WriteText(&b)
	if r.Instructions.Available || !strings.Contains(b.String(), "unavailable") || !strings.Contains(b.String(), "apt-get install valgrind") {
		t.Errorf("without valgrind: %+v\n%s", r.Instructions, b.String())
	}
}
