// Package postgres is the shared history store: a PostgreSQL database, through pgx, selected with
// --store postgres://user:pass@host/db or INFERBENCH_STORE. Migrations run under an advisory lock,
// so several CI jobs may open a fresh database at once.
package postgres

import (
	"context"
	"database/sql"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"

	"github.com/inferbench/inferbench/store"
	"github.com/inferbench/inferbench/store/internal/sqlstore"
)

func init() { store.Register(Open, "postgres", "postgresql") }

var _ store.Opener = Open

// migrationLock is the advisory lock key held while migrating ("inferbnc" in ASCII).
const migrationLock = 0x696e666572626e63

// Open connects to the database p.URL names and runs the migrations.
func Open(ctx context.Context, p store.Params) (store.Store, error) {
	db, err := sql.Open("pgx", p.URL)
	if err != nil {
		return nil, err
	}
	s, err := sqlstore.New(ctx, db, sqlstore.Dialect{
		Name: "postgres", Numbered: true, Blob: "BYTEA", MaxParams: 60000,
		Lock: func(ctx context.Context, conn *sql.Conn) (func(), error) {
			if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
				return nil, err
			}
			return func() {
				_, _ = conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrationLock))
			}, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}
