// Package postgres is the shared history store: a PostgreSQL database, through pgx, selected with
// --store postgres://user:pass@host/db or INFERBENCH_STORE. Migrations run under an advisory lock,
// so several CI jobs may open a fresh database at once.
//
// Every call is bounded in time: connecting (ConnectTimeout, unless the URL sets connect_timeout),
// opening with its migrations (OpenTimeout), and each store operation (OpTimeout). A server that
// accepts connections and never answers fails the call with an error saying so, so `run` never
// hangs after measuring.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
	"github.com/inferbench/inferbench/store/internal/sqlstore"
)

func init() { store.Register(open, "postgres", "postgresql") }

var _ store.Opener = open

// Time bounds of the store's calls (variables so tests can shorten them).
var (
	// ConnectTimeout bounds establishing one connection, authentication included, when the URL
	// has no connect_timeout.
	ConnectTimeout = 10 * time.Second
	// openTimeout bounds Open: the first connection and the migrations.
	openTimeout = time.Minute
	// opTimeout bounds each store operation (Put of a large run included).
	opTimeout = 2 * time.Minute
)

// migrationLock is the advisory lock key held while migrating ("inferbnc" in ASCII).
const migrationLock = 0x696e666572626e63

// open connects to the database p.URL names and runs the migrations.
func open(ctx context.Context, p store.Params) (store.Store, error) {
	cfg, err := pgx.ParseConfig(p.URL)
	if err != nil {
		return nil, err
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = ConnectTimeout
	}
	where := fmt.Sprintf("postgres %s:%d", cfg.Host, cfg.Port)
	db := stdlib.OpenDB(*cfg)
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	s, err := sqlstore.New(octx, db, sqlstore.Dialect{
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
		if ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || octx.Err() != nil || isTimeout(err)) {
			return nil, fmt.Errorf("%s: no answer within %v (connect_timeout) or %v (opening): the server accepted the connection but did not respond: %w",
				where, cfg.ConnectTimeout, openTimeout, err)
		}
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return &bounded{Store: s, where: where}, nil
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// bounded gives each operation of a store OpTimeout.
type bounded struct {
	store.Store
	where string
}

// bound runs one operation of the wrapped store (op names it in errors) under OpTimeout, and says
// so when the bound, not the caller, ended it.
func bound[T any](b *bounded, ctx context.Context, op string, call func(context.Context) (T, error)) (T, error) {
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	v, err := call(octx)
	if err != nil && ctx.Err() == nil && octx.Err() != nil {
		err = fmt.Errorf("%s: %s: no answer within %v (OpTimeout): %w", b.where, op, opTimeout, err)
	}
	return v, err
}

// boundErr is bound for an operation that returns only an error.
func boundErr(b *bounded, ctx context.Context, op string, call func(context.Context) error) error {
	_, err := bound(b, ctx, op, func(ctx context.Context) (struct{}, error) { return struct{}{}, call(ctx) })
	return err
}

func (b *bounded) Put(ctx context.Context, r *result.Run) error {
	return boundErr(b, ctx, "put", func(ctx context.Context) error { return b.Store.Put(ctx, r) })
}

func (b *bounded) PutStream(ctx context.Context, head *result.Run, bs store.Batches) error {
	return boundErr(b, ctx, "put", func(ctx context.Context) error { return b.Store.(store.Streamer).PutStream(ctx, head, bs) })
}

func (b *bounded) Get(ctx context.Context, id string) (*result.Run, error) {
	return bound(b, ctx, "get", func(ctx context.Context) (*result.Run, error) { return b.Store.Get(ctx, id) })
}

func (b *bounded) List(ctx context.Context, f store.Filter) ([]store.RunInfo, error) {
	return bound(b, ctx, "list", func(ctx context.Context) ([]store.RunInfo, error) { return b.Store.List(ctx, f) })
}

func (b *bounded) SetBaseline(ctx context.Context, bl store.Baseline) error {
	return boundErr(b, ctx, "set baseline", func(ctx context.Context) error { return b.Store.SetBaseline(ctx, bl) })
}

func (b *bounded) Baseline(ctx context.Context, name string) (store.Baseline, error) {
	return bound(b, ctx, "baseline", func(ctx context.Context) (store.Baseline, error) { return b.Store.Baseline(ctx, name) })
}

func (b *bounded) ListBaselines(ctx context.Context) ([]store.Baseline, error) {
	return bound(b, ctx, "list baselines", func(ctx context.Context) ([]store.Baseline, error) { return b.Store.ListBaselines(ctx) })
}

func (b *bounded) History(ctx context.Context, q store.Query) ([]store.Point, error) {
	return bound(b, ctx, "history", func(ctx context.Context) ([]store.Point, error) { return b.Store.History(ctx, q) })
}

// The store's optional interfaces (store.Barrier, store.Clock, store.Streamer) pass through the bound too: a
// wrapper that hid them made --start-at barrier say "the store has no barrier".
var (
	_ store.Barrier  = (*bounded)(nil)
	_ store.Clock    = (*bounded)(nil)
	_ store.Streamer = (*bounded)(nil)
	// What bounded wraps has them: the assertions below cannot fail.
	_ store.Barrier  = (*sqlstore.DB)(nil)
	_ store.Clock    = (*sqlstore.DB)(nil)
	_ store.Streamer = (*sqlstore.DB)(nil)
)

func (b *bounded) Arrive(ctx context.Context, group string, index int, host string, at time.Time) error {
	return boundErr(b, ctx, "barrier arrive", func(ctx context.Context) error { return b.Store.(store.Barrier).Arrive(ctx, group, index, host, at) })
}

func (b *bounded) Arrivals(ctx context.Context, group string, since time.Time) ([]store.Arrival, error) {
	return bound(b, ctx, "barrier arrivals", func(ctx context.Context) ([]store.Arrival, error) {
		return b.Store.(store.Barrier).Arrivals(ctx, group, since)
	})
}

func (b *bounded) Now(ctx context.Context) (time.Time, error) {
	return bound(b, ctx, "clock", func(ctx context.Context) (time.Time, error) { return b.Store.(store.Clock).Now(ctx) })
}
