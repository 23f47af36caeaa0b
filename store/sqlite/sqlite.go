// Package sqlite is the default history store: one SQLite file in the project
// (.inferbench/history.db), through modernc.org/sqlite, a pure-Go driver, so the binary stays
// static. Several processes may write at once: the file is in WAL mode, writers take the lock at
// the start of their transaction and wait for each other up to a busy timeout.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/inferbench/inferbench/store"
	"github.com/inferbench/inferbench/store/internal/sqlstore"
)

func init() { store.Register(open, "sqlite", "file") }

var _ store.Opener = open

// open opens (creating when needed) the SQLite store that p names: store.SQLitePath(p.URL, p.Dir).
func open(ctx context.Context, p store.Params) (store.Store, error) {
	path := store.SQLitePath(p.URL, p.Dir)
	if path != ":memory:" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(30000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	if path == ":memory:" {
		db.SetMaxOpenConns(1) // every connection would be its own database
	}
	s, err := sqlstore.New(ctx, db, sqlstore.Dialect{Name: "sqlite", Blob: "BLOB", MaxParams: 32000})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
