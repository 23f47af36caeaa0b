//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/testkit/storetest"
	"github.com/inferbench/inferbench/result"
)

// The next run into the same output folder records a killed run (run.json partial, no
// finished_at, its run.log not locked by a live run) in the store, marked partial; a run still
// in progress (its run.log locked) is left alone. Before, a killed run reached the store only by
// hand.
func TestNextRunRecordsKilledRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	mk := func(id string) string {
		r := storetest.MakeRun(id, storetest.T0, 1, 10, []string{"resnet"}, 2, 10)
		r.Partial, r.FinishedAt = true, time.Time{}
		p := filepath.Join(out, id)
		os.MkdirAll(p, 0o755)
		if err := result.Save(p, r); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(p, result.LogFile), []byte("run started\n"), 0o644)
		return p
	}
	mk("20260101_000000-killed00")
	running := mk("20260101_000000-running0")
	f, err := os.Open(filepath.Join(running, result.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "h.db")
	code, _, errOut := runCLI(t, dir, nil, "run", "--exec", "true", "--iterations", "2", "--warmup", "0", "--no-monitor",
		"--output-dir", "out", "--store", db, "--format", "none")
	if code != ExitOK || !strings.Contains(errOut, "recorded killed run 20260101_000000-killed00") {
		t.Fatalf("run: exit %d, want the killed run recorded\n%s", code, errOut)
	}
	infos := storedRuns(t, db)
	byID := map[string]bool{}
	for _, ri := range infos {
		byID[ri.ID] = ri.Partial
	}
	if len(infos) != 2 || !byID["20260101_000000-killed00"] {
		t.Errorf("stored %+v, want this run and the killed one, marked partial", infos)
	}
	if _, ok := byID["20260101_000000-running0"]; ok {
		t.Error("a run still in progress (its run.log locked) was recorded")
	}
	// The next run does not record it again.
	runCLI(t, dir, nil, "run", "--exec", "true", "--iterations", "2", "--warmup", "0", "--no-monitor", "--output-dir", "out", "--store", db, "--format", "none")
	if n := len(storedRuns(t, db)); n != 3 {
		t.Errorf("%d runs after a third run, want 3", n)
	}
}
