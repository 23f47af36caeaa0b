package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/result"
)

// TestPythonMemoryProfile: --profile for a Python benchmark writes, beside the time profile, the
// lines that allocated most from tracemalloc, with sizes and file:line, listed with the profiles
// (and so linked from report.html) by their paths relative to the run folder (issue 23: seed 002's
// and 003's memory_profiler had no counterpart).
func TestPythonMemoryProfile(t *testing.T) {
	py := pyenv.Find(nil).Path
	if _, err := exec.LookPath(py); err != nil {
		t.Skipf("%s is not installed: worker processes cannot run", py)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "benches", "alloc.py"), `def run_alloc():
    data = [bytes(1024) for _ in range(500)]
    return len(data)
`)
	out := filepath.Join(t.TempDir(), "results")
	r, err := Run(t.Context(), Options{
		Selection: Selection{Paths: []string{dir}}, OutputDir: out, NoStore: true, Format: "none",
		Monitor: Monitor{Off: true}, Dir: dir, Profile: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Scenarios[0]
	want := "profiles/alloc.run_alloc__default/memory_top.txt"
	if s.Status != result.StatusOK || !slices.Contains(s.Profiles, want) {
		t.Fatalf("%s %s: profiles %q, want %s among them", s.Status, s.Error, s.Profiles, want)
	}
	data, err := os.ReadFile(filepath.Join(out, r.ID, want))
	if err != nil {
		t.Fatal(err)
	}
	// The list comprehension's line holds about 500 KiB (500 blocks of 1 KiB and their headers).
	line := regexp.MustCompile(`(?m)^\s+([0-9.]+)\s+([0-9]+)\s+\S*alloc\.py:2\s+data = \[bytes\(1024\)`).FindStringSubmatch(string(data))
	if line == nil {
		t.Fatalf("no line for alloc.py:2 in\n%s", data)
	}
	html, _ := os.ReadFile(filepath.Join(out, r.ID, "report.html"))
	if !regexp.MustCompile(`href="` + regexp.QuoteMeta(want) + `"`).Match(html) {
		t.Errorf("report.html does not link %s", want)
	}
}
