package run

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/result"
)

// TestMissingImportSkipped: a user's benchmark that imports a module this Python lacks is
// skipped with the module named, like any other unmet requirement; a benchmark that raises fails
// with its own frames, not the worker's (issue 23: FAILED with worker-internal frames).
func TestMissingImportSkipped(t *testing.T) {
	py := pyenv.Find(nil).Path
	if _, err := exec.LookPath(py); err != nil {
		t.Skipf("%s is not installed: worker processes cannot run", py)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "benches", "needs.py"), "import hf_eco2ai_not_installed\n\ndef run_needs():\n    return 1\n")
	writeFile(t, filepath.Join(dir, "benches", "needs_class.py"), `class NeedsBenchmark:
    def setup_model(self, config):
        import psutil_not_installed

    def measure_latency(self, config):
        return 1
`)
	writeFile(t, filepath.Join(dir, "benches", "lazy.py"), "def run_lazy():\n    import memory_profiler_not_installed\n    return 1\n")
	writeFile(t, filepath.Join(dir, "benches", "raises.py"), "def run_raises():\n    raise ValueError('boom in the user code')\n")
	out := filepath.Join(t.TempDir(), "results")
	r, _ := Run(t.Context(), Options{
		Selection: Selection{Paths: []string{dir}}, OutputDir: out, NoStore: true, NoHTMLReport: true, Format: "none",
		Monitor: Monitor{Off: true}, Dir: dir,
	})
	if r == nil {
		t.Fatal("no run")
	}
	byName := map[string]result.Scenario{}
	for _, s := range r.Scenarios {
		byName[s.Benchmark] = s
	}
	for name, module := range map[string]string{"needs.run_needs": "hf_eco2ai_not_installed", "needs_class.NeedsBenchmark": "psutil_not_installed",
		"lazy.run_lazy": "memory_profiler_not_installed"} { // imported in the function's body, at its first call
		s := byName[name]
		if s.Status != result.StatusSkipped || !strings.Contains(s.SkipReason, "'"+module+"'") {
			t.Errorf("%s: %s %q%s: want skipped naming %s", name, s.Status, s.SkipReason, s.Error, module)
		}
	}
	s := byName["raises.run_raises"]
	if s.Status != result.StatusFailed || !strings.Contains(s.Error, "raises.py") || !strings.Contains(s.Error, "boom in the user code") {
		t.Errorf("raises: %s %q: want failed with the user's frame", s.Status, s.Error)
	}
	if strings.Contains(s.Error, "inferbench_worker") {
		t.Errorf("raises: the error shows the worker's own frames:\n%s", s.Error)
	}
}
