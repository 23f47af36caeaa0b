package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// TestOpenTogether: processes that open a new history file at the same moment (parallel CI
// shards, load agents) all get a working store, though only one of them converts the file to
// WAL and SQLite answers the others SQLITE_BUSY without its busy timeout.
func TestOpenTogether(t *testing.T) {
	for trial := range 100 {
		path := filepath.Join(t.TempDir(), fmt.Sprint(trial, ".db"))
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				db, err := sql.Open("sqlite", dsn(path))
				if err != nil {
					t.Error(err)
					return
				}
				defer db.Close()
				if err = walMode(context.Background(), db); err == nil {
					_, err = db.Exec("CREATE TABLE IF NOT EXISTS t (a INTEGER)")
				}
				if err != nil {
					t.Errorf("trial %d, opener %d: %v", trial, i, err)
				}
			}()
		}
		wg.Wait()
	}
}
