package run_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
)

// cancelAfterFirst cancels the run when its first scenario is done, as Ctrl-C would.
type cancelAfterFirst struct{ cancel context.CancelFunc }

func (c cancelAfterFirst) ScenarioFinished(*result.Scenario) { c.cancel() }

// TestInterruptNamesNotStarted: a run interrupted after its first scenario says which of the
// selected scenarios it did not start. Before, it said "interrupted: partial results in DIR"
// only, and the scenarios that never started were named nowhere.
func TestInterruptNamesNotStarted(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "benches"), 0o755)
	os.WriteFile(filepath.Join(dir, "benches", "m.yaml"), []byte("name: m\nsubject: {kind: exec, command: [true]}\nmatrix: {n: [1, 2, 3, 4]}\nload: {warmup_iterations: 0, measurement_iterations: 1}\n"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := run.Run(ctx, run.Options{Dir: dir, NoStore: true, OutputDir: "out", Stdout: io.Discard, Stderr: io.Discard,
		Observers: []run.Observer{cancelAfterFirst{cancel}}})
	if !errors.Is(err, run.ErrInterrupted) {
		t.Fatalf("err = %v, want interrupted", err)
	}
	if !strings.Contains(err.Error(), "3 scenarios not started: m/n=2, m/n=3, m/n=4") {
		t.Errorf("err = %v: want the scenarios not started named", err)
	}
}
