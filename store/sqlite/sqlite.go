// Package sqlite is the default history store: one SQLite file in the project
// (.inferbench/history.db), through modernc.org/sqlite, a pure-Go driver, so the binary stays
// static. Several processes may write at once: the file is in WAL mode, writers take the lock at
// the start of their transaction and wait for each other up to a busy timeout.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

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
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, err
	}
	if path == ":memory:" {
		db.SetMaxOpenConns(1) // every connection would be its own database
	} else if err := walMode(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s, err := sqlstore.New(ctx, db, sqlstore.Dialect{Name: "sqlite", Blob: "BLOB", MaxParams: 32000})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// dsn is the data source name of the file at path: the settings each connection starts with.
func dsn(path string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(30000)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// walMode puts the file in WAL mode, which stays with the file. Processes that open a new file
// together race to convert it, and SQLite answers the loser SQLITE_BUSY at once, without its busy
// timeout: so the conversion is retried here, for as long as that timeout.
func walMode(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(30 * time.Second)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		var mode string
		err := db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode)
		if err == nil {
			return nil
		}
		var coded interface{ Code() int }
		busy := errors.As(err, &coded) && coded.Code()&0xff == 5 // SQLITE_BUSY and its extended codes
		if !busy || time.Now().After(deadline) {
			return fmt.Errorf("journal mode WAL: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}
