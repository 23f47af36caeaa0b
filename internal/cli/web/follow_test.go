package web

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/internal/stage/recovery"
	"github.com/inferbench/inferbench/internal/testkit/storetest"
	"github.com/inferbench/inferbench/result"
)

// TestWatchResultsFollowsJournal: serve follows a run written by another process as `inferbench
// run` writes it, a first run.json and then a journal line per finished scenario, until the final
// run.json with the journal removed. Each scenario reaches the view as its journal line is
// appended; run.json is read when the run is first seen and when it finished, not while the
// journal is followed: a rewrite of run.json in between (here with a scenario the journal never
// had, which no real run writes) shows nothing; a finished run's rewritten run.json (the store
// gave it another id) is read again. Failed before: the watcher re-read run.json at
// each change, and showed b/stray.
func TestWatchResultsFollowsJournal(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "w1")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := storetest.MakeRun("w1", storetest.T0, 1, 10, []string{"b"}, 3, 10)
	final := *r
	r.Partial, r.FinishedAt = true, time.Time{} // in progress
	r.Scenarios = nil
	if err := result.Save(dir, r); err != nil {
		t.Fatal(err)
	}
	j, err := recovery.OpenJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.Add(&final.Scenarios[0]); err != nil {
		t.Fatal(err)
	}
	if err := recovery.LinkLatest(root, dir); err != nil {
		t.Fatal(err)
	}

	h, m := NewHub(), NewMetrics()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		WatchResults(ctx, root, 5*time.Millisecond, h, m)
		close(done)
	}()
	defer func() { cancel(); <-done }()
	ids := func(s LiveState) []string {
		var out []string
		for _, sc := range s.Scenarios {
			out = append(out, sc.ID)
		}
		return out
	}
	wait := func(what string, cond func(LiveState) bool) {
		t.Helper()
		for range 1000 {
			if cond(h.State()) {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("%s: state never matched: %+v", what, h.State())
	}
	wait("joined", func(s LiveState) bool { return s.RunID == "w1" && s.Done == 1 && s.Running })

	stray := *r
	stray.Scenarios = []result.Scenario{final.Scenarios[0], final.Scenarios[1]}
	stray.Scenarios[1].Scenario = "stray"
	time.Sleep(10 * time.Millisecond) // a new modification time
	if err := result.Save(dir, &stray); err != nil {
		t.Fatal(err)
	}
	if err := j.Add(&final.Scenarios[1]); err != nil {
		t.Fatal(err)
	}
	wait("second scenario", func(s LiveState) bool { return s.Done == 2 })
	time.Sleep(20 * time.Millisecond) // several polls: the stray scenario would be read by now
	if d := cmp.Diff([]string{"b/batch_size=1", "b/batch_size=2"}, ids(h.State())); d != "" {
		t.Errorf("scenarios while the journal is followed (-want +got):\n%s", d)
	}

	if err := j.Add(&final.Scenarios[2]); err != nil {
		t.Fatal(err)
	}
	if err := result.Save(dir, &final); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, result.JournalFile)); err != nil {
		t.Fatal(err)
	}
	wait("finished", func(s LiveState) bool { return !s.Running && s.Done == 3 })
	if d := cmp.Diff([]string{"b/batch_size=1", "b/batch_size=2", "b/batch_size=4"}, ids(h.State())); d != "" {
		t.Errorf("scenarios of the finished run (-want +got):\n%s", d)
	}

	// The store gave the run another id: run.json says so, and so does the view.
	final.ID = "w1-2"
	time.Sleep(10 * time.Millisecond) // a new modification time
	if err := result.Save(dir, &final); err != nil {
		t.Fatal(err)
	}
	wait("renamed", func(s LiveState) bool { return s.RunID == "w1-2" && !s.Running && s.Done == 3 })
}
