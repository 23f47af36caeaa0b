// Package recovery records the runs that were killed. A run holds a lock on its run.log while it
// lasts (Lock); the kernel drops it when the process dies, however it dies. The record stage of
// the next run into the same output folder (package run) finds the folders of runs that were
// killed — run.json partial, without finished_at, run.log not locked — and records them in the
// store, marked partial, unless they are there already (Record). The run folder's making is here
// too, for run, merge and ab alike: a new folder named by a run id (NewDir), the journal of its
// finished scenarios that result.Load reads back after a kill (OpenJournal), latest pointed at
// it (LinkLatest), and a run recorded under a new id when its own is taken (PutNew); so are the
// names of the files a run's render stage adds to its folder (ReportFile, ...) and the location of
// the store runs are recorded in (StoreLocation, StoreLabel).
package recovery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/inferbench/inferbench/internal/base/readall"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
)

// Record records with put the killed runs under root (other than skip) that st lacks, and
// returns their ids. put is how the caller records a run (PutNew: a new id when the run's is
// taken).
func Record(ctx context.Context, st store.Store, root, skip string, put func(context.Context, store.Runs, *result.Run) error) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var ids []string
	var errs []error
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() || e.Type()&os.ModeSymlink != 0 || dir == skip || !killedHead(filepath.Join(dir, result.RunFile)) {
			continue
		}
		unlock, ok := tryLockLog(filepath.Join(dir, result.LogFile))
		if !ok {
			continue // still running
		}
		r, err := result.Load(dir)
		if err == nil && r.Partial && r.FinishedAt.IsZero() {
			if _, gerr := st.Get(ctx, r.ID); errors.Is(gerr, store.ErrNotFound) {
				if err = put(ctx, st, r); err == nil {
					ids = append(ids, r.ID)
				}
			}
		}
		unlock()
		if err != nil {
			errs = append(errs, err)
		}
	}
	return ids, errors.Join(errs...)
}

// killedHead reports whether a run.json's first bytes say partial without a finished_at (the
// field comes right after started_at when the run finished), without reading a large file whole.
func killedHead(path string) bool {
	f, err := readall.Open(path) // a named pipe called run.json would block the next run
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	i := bytes.Index(head, []byte(`"environment"`))
	if i < 0 {
		return false
	}
	head = head[:i]
	return bytes.Contains(head, []byte(`"partial": true`)) && !bytes.Contains(head, []byte(`"finished_at"`))
}

// PutNew records r in st. When r's ID is already stored (a run from another process or host),
// r gets a new ID (result.NewID) and is put again: a stored run is never replaced and r is never
// dropped.
func PutNew(ctx context.Context, st store.Runs, r *result.Run) error {
	for range 5 {
		err := st.Put(ctx, r)
		if !errors.Is(err, store.ErrExists) {
			return err
		}
		r.ID = result.NewID(r.StartedAt)
	}
	return fmt.Errorf("run %s: no free run id after 5 tries: %w", r.ID, store.ErrExists)
}
