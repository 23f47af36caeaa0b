package run

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestNothingMeasuredFails: a run whose every scenario was skipped measured nothing, and exits 1
// saying why (issue 23: it exited 0, and a CI job passed on no numbers).
func TestNothingMeasuredFails(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "benches", "b.yaml"), `name: gpu-only
subject: {kind: exec, command: ["true"]}
matrix: {n: [1, 2, 3]}
requires: ["env:INFERBENCH_TEST_TOKEN"]
`)
	r, err := Run(t.Context(), Options{
		Selection: Selection{Paths: []string{dir}}, OutputDir: filepath.Join(t.TempDir(), "out"), NoStore: true,
		NoHTMLReport: true, Format: "none", Monitor: Monitor{Off: true}, Dir: dir,
		Env: []string{"PATH=/usr/bin:/bin"},
	})
	if r == nil || r.Summary.Skipped != 3 {
		t.Fatalf("run %+v, err %v: want 3 skipped", r, err)
	}
	if !errors.Is(err, ErrFailed) || ExitCode(err) != 1 {
		t.Fatalf("err = %v (exit %d), want ErrFailed, exit 1", err, ExitCode(err))
	}
	if msg := err.Error(); !strings.Contains(msg, "nothing was measured: all 3 scenarios were skipped; 3: ") || !strings.Contains(msg, "INFERBENCH_TEST_TOKEN") {
		t.Errorf("err = %q: want the reason", msg)
	}
}
