package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkManyFastScenarios is a run of 2,000 scenarios of one call each of a Go function that
// does nothing: the harness's cost per scenario, which the write stage dominates. run.json used to
// be rewritten whole after every scenario, a cost that grows with the scenarios before it
// (quadratic in the run); now each scenario is a line appended to the journal, and run.json is
// rewritten when that costs at most a tenth of the time since the last rewrite.
//
//	go test -run '^$' -bench ManyFastScenarios -benchtime 3x ./run
func BenchmarkManyFastScenarios(b *testing.B) {
	const n = 2000
	proj := b.TempDir()
	matrix := make([]string, n)
	for i := range matrix {
		matrix[i] = fmt.Sprint(i)
	}
	def := "name: many\nsubject: {kind: gofunc, func: inferbench/noop}\nmatrix:\n  i: [" + strings.Join(matrix, ", ") +
		"]\nload: {warmup_iterations: 0, measurement_iterations: 1}\n"
	if err := os.MkdirAll(filepath.Join(proj, "benches"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "benches", "many.yaml"), []byte(def), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r, err := Run(context.Background(), Options{
			Dir: proj, OutputDir: filepath.Join(b.TempDir(), "out"), NoStore: true, NoHTMLReport: true,
			NoRequestLog: true, Monitor: Monitor{Off: true}, Format: "none",
		})
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Scenarios) != n {
			b.Fatalf("%d scenarios, want %d", len(r.Scenarios), n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/scenario")
}
