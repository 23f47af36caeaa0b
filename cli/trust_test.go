package cli

// Tests of the trust promises of docs/reliability.md that need the whole command line: runs and
// imports are never lost or replaced in the store.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
	"github.com/inferbench/inferbench/store/storetest"
)

// storedRuns lists the runs of the SQLite store at path.
func storedRuns(t *testing.T, path string) []store.RunInfo {
	t.Helper()
	st, err := store.Open(context.Background(), store.Params{URL: "sqlite:" + path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	infos, err := st.List(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return infos
}

// Eight runs started at once into one store, each with its own output folder, are eight runs.
// Before run ids were random, they shared the second's id and the store kept one of the eight.
func TestConcurrentRunsIntoOneStoreAreKept(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "same.db")
	const n = 8
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, _ = runCLI(t, dir, nil, "run", "--exec", "true", "--iterations", "2", "--warmup", "0",
				"--no-monitor", "--store", db, "--output-dir", fmt.Sprintf("out%d", i), "--format", "none")
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != ExitOK {
			t.Errorf("run %d: exit %d", i, c)
		}
	}
	infos := storedRuns(t, db)
	if len(infos) != n {
		t.Fatalf("%d runs in the store, want %d", len(infos), n)
	}
	// Each folder's run.json carries the id it was stored under.
	ids := map[string]bool{}
	for _, ri := range infos {
		ids[ri.ID] = true
	}
	for i := range n {
		r, err := result.Load(filepath.Join(dir, fmt.Sprintf("out%d", i), result.LatestLink))
		if err != nil {
			t.Fatal(err)
		}
		if !ids[r.ID] {
			t.Errorf("out%d: run %s is not in the store", i, r.ID)
		}
	}
}

// Two files of the same name imported in the same second are two runs; an id asked for with --id
// that is taken is an error, never a replaced run.
func TestImportSameNameTwice(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"a", "b"} {
		os.MkdirAll(filepath.Join(dir, sub), 0o755)
		os.WriteFile(filepath.Join(dir, sub, "bench.txt"), []byte("BenchmarkX-8\t1000\t1000 ns/op\nBenchmarkX-8\t1000\t1010 ns/op\n"), 0o644)
	}
	code, out, errOut := runCLI(t, dir, nil, "import", "a/bench.txt", "b/bench.txt", "--time", "2026-03-01T12:00:00Z")
	if code != ExitOK {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	if ids := strings.Fields(out); len(ids) != 2 || ids[0] == ids[1] {
		t.Errorf("import printed ids %q, want two different ids", ids)
	}
	if infos := storedRuns(t, filepath.Join(dir, store.DefaultPath)); len(infos) != 2 {
		t.Errorf("%d runs stored, want 2", len(infos))
	}
	if code, _, _ := runCLI(t, dir, nil, "import", "a/bench.txt", "--id", "x"); code != ExitOK {
		t.Fatalf("import --id x: exit %d", code)
	}
	code, _, errOut = runCLI(t, dir, nil, "import", "b/bench.txt", "--id", "x")
	if code == ExitOK || !strings.Contains(errOut, "already stored") {
		t.Errorf("import --id x again: exit %d, want an 'already stored' error\n%s", code, errOut)
	}
}

// A run killed before it finished leaves a run.json without finished_at: import records it,
// marked partial, with every scenario it holds. Another run.json with the same id (the old
// per-second ids, or a copy) gets a new id instead of replacing it.
func TestImportKilledRun(t *testing.T) {
	dir := t.TempDir()
	r := storetest.MakeRun("20261122_143005", storetest.T0, 1, 10, []string{"resnet"}, 3, 20)
	r.FinishedAt, r.Partial = time.Time{}, false // as if killed between two writes of a writer that had not marked it
	p := filepath.Join(dir, "killed")
	os.MkdirAll(p, 0o755)
	if err := result.Save(p, r); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, dir, nil, "import", "killed/run.json")
	if code != ExitOK || strings.TrimSpace(out) != r.ID || !strings.Contains(errOut, "partial") {
		t.Fatalf("import killed/run.json: exit %d\n%s%s", code, out, errOut)
	}
	infos := storedRuns(t, filepath.Join(dir, store.DefaultPath))
	if len(infos) != 1 || !infos[0].Partial || infos[0].Scenarios != 3 {
		t.Fatalf("stored %+v, want one partial run of 3 scenarios", infos)
	}
	code, out, errOut = runCLI(t, dir, nil, "import", "killed/run.json")
	if code != ExitOK || strings.TrimSpace(out) == r.ID || !strings.Contains(errOut, "was taken") {
		t.Errorf("second import: exit %d, want a new id\n%s%s", code, out, errOut)
	}
	if infos := storedRuns(t, filepath.Join(dir, store.DefaultPath)); len(infos) != 2 {
		t.Errorf("%d runs stored after a second import, want 2", len(infos))
	}
}
