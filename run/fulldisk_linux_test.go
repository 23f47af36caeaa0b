package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// A full disk does not discard results: the run names the file that could not be written, still
// prints the summary, fails, and keeps every scenario it measured (written to $TMPDIR instead).
// Before, run.json kept the scenarios measured before the disk filled and the rest were lost
// (measured with a 2 MB tmpfs: 154 of 200 scenarios kept).
func TestFullDiskKeepsEveryScenario(t *testing.T) {
	full := t.TempDir()
	if err := syscall.Mount("tmpfs", full, "tmpfs", 0, "size=128k"); err != nil {
		t.Skipf("a small tmpfs is needed to fill a disk and mounting one is not allowed here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(full, 0) })

	proj, tmp := t.TempDir(), t.TempDir()
	const n = 20
	var matrix []string
	for i := range n {
		matrix = append(matrix, fmt.Sprint(i))
	}
	def := "name: fill\nsubject: {kind: gofunc, func: inferbench/noop}\nmatrix:\n  i: [" + strings.Join(matrix, ", ") +
		"]\nload: {warmup_iterations: 0, measurement_iterations: 2000}\n"
	os.MkdirAll(filepath.Join(proj, "benches"), 0o755)
	if err := os.WriteFile(filepath.Join(proj, "benches", "fill.yaml"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	r, err := Run(context.Background(), Options{
		Dir: proj, Env: []string{"TMPDIR=" + tmp}, OutputDir: full, NoStore: true, NoHTMLReport: true,
		NoRequestLog: true, Monitor: Monitor{Off: true}, KeepSamples: -1, Stdout: &out, Stderr: &errOut,
	})
	if err == nil {
		t.Fatal("a run onto a full disk succeeded")
	}
	if errors.Is(err, ErrUsage) || r == nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(err.Error(), filepath.Join(full, r.ID, result.RunFile)) || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("the error does not name the file that could not be written: %v", err)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("%d scenarios: %d ok", n, n)) {
		t.Errorf("no summary on stdout:\n%s", out.String())
	}
	alts, _ := filepath.Glob(filepath.Join(tmp, "inferbench-"+r.ID+"-*", result.RunFile))
	if len(alts) != 1 || !strings.Contains(err.Error(), alts[0]) {
		t.Fatalf("run.json written elsewhere: %v; error: %v", alts, err)
	}
	if !strings.Contains(out.String(), "results: "+filepath.Dir(alts[0])+" (") {
		t.Errorf("the summary's results line does not name the folder holding the whole run:\n%s", out.String())
	}
	kept, lerr := result.Load(alts[0])
	if lerr != nil {
		t.Fatal(lerr)
	}
	if len(kept.Scenarios) != n || kept.Summary.Succeeded != n {
		t.Errorf("%s keeps %d scenarios (%d ok), want %d", alts[0], len(kept.Scenarios), kept.Summary.Succeeded, n)
	}
	for _, sc := range kept.Scenarios {
		if got := len(sc.Metrics["latency_ms"].Samples); got != 2000 {
			t.Errorf("%s: %d latency samples kept, want 2000", sc.ID(), got)
			break
		}
	}
}
