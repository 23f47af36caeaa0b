package run

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/stage/recovery"
)

// TestRunEndsWithNextSteps: a run's summary ends with where the results are and three things to
// try, and a run with budgets but no baseline writes no compare.md (issue 23: the demo's read
// "compared with `-` ... 0 tests").
func TestRunEndsWithNextSteps(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "benches", "b.yaml"), `name: m
subject: {kind: mock, latency_ms: 1, jitter: 0}
load: {warmup_iterations: 0, measurement_iterations: 3}
budgets: {latency_ms.p50: "<= 1000"}
`)
	var out bytes.Buffer
	r, err := Run(t.Context(), Options{
		Selection: Selection{Paths: []string{dir}, EnableMock: true}, OutputDir: filepath.Join(dir, "out"),
		Store: filepath.Join(dir, "history.db"), Monitor: Monitor{Off: true}, Dir: dir, Stdout: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, "out", r.ID)
	text := out.String()
	tail := text[strings.LastIndex(text, "results: "):]
	for _, want := range []string{"results: " + runDir, "next:", "open " + filepath.Join(runDir, "report.html"), "inferbench serve", "inferbench doctor"} {
		if !strings.Contains(tail, want) {
			t.Errorf("the summary's end lacks %q:\n%s", want, tail)
		}
	}
	if _, err := os.Stat(filepath.Join(runDir, recovery.CompareMarkdownFile)); err == nil {
		t.Errorf("%s written with no baseline to compare with", recovery.CompareMarkdownFile)
	}
	if _, err := os.Stat(filepath.Join(runDir, recovery.CompareJSONFile)); err != nil {
		t.Errorf("the budgets' verdict: %v", err)
	}
}
