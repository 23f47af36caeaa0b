//go:build unix

package recovery

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
	_ "github.com/inferbench/inferbench/store/sqlite"
)

// TestRecordsOnlyKilledRuns: of the run folders beside a new run, Record records the one that was
// killed (partial, no finished_at, run.log not locked) and not a finished run, a run still going
// (its run.log locked), a run already stored, nor the new run itself.
func TestRecordsOnlyKilledRuns(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	st, err := store.Open(ctx, store.Params{URL: "sqlite:" + filepath.Join(t.TempDir(), "h.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	folder := func(id string, partial bool) string {
		t.Helper()
		dir := filepath.Join(root, id)
		r := &result.Run{Schema: result.Schema, ID: id, Partial: partial, StartedAt: time.Unix(1e9, 0),
			Environment: map[string]any{}, Scenarios: []result.Scenario{}}
		if !partial {
			r.FinishedAt = r.StartedAt.Add(time.Second)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := result.Save(dir, r); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, result.LogFile), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	folder("killed", true)
	folder("finished", false)
	running, err := os.Open(filepath.Join(folder("running", true), result.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()
	Lock(running)
	folder("stored", true)
	if err := st.Put(ctx, &result.Run{Schema: result.Schema, ID: "stored", StartedAt: time.Unix(1e9, 0), Scenarios: []result.Scenario{}}); err != nil {
		t.Fatal(err)
	}
	self := folder("self", true)

	put := func(ctx context.Context, st store.Runs, r *result.Run) error { return st.Put(ctx, r) }
	ids, err := Record(ctx, st, root, self, put)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"killed"}) {
		t.Fatalf("recorded %v, want [killed]", ids)
	}
	if r, err := st.Get(ctx, "killed"); err != nil || !r.Partial {
		t.Errorf("stored killed run %+v, %v: want it, partial", r, err)
	}
}
