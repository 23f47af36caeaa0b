package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/inferbench/inferbench/store"
)

var (
	_ store.Barrier = (*DB)(nil)
	_ store.Clock   = (*DB)(nil)
)

// Note: the barrier's table is created on first use rather than by a migration: it holds no
// history, only the arrivals of groups being started, and keeping it out of the migrations keeps
// the history schema's versions to the history.
const barrierTable = `CREATE TABLE IF NOT EXISTS barrier_arrivals (
	group_id TEXT NOT NULL,
	idx INTEGER NOT NULL,
	host TEXT NOT NULL DEFAULT '',
	arrived_at BIGINT NOT NULL,
	PRIMARY KEY (group_id, idx)
)`

func (s *DB) ensureBarrier(ctx context.Context) error {
	if s.barrier.Load() {
		return nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if s.d.Lock != nil { // concurrent CREATE TABLE IF NOT EXISTS can collide in PostgreSQL
		unlock, err := s.d.Lock(ctx, conn)
		if err != nil {
			return err
		}
		defer unlock()
	}
	if _, err := conn.ExecContext(ctx, barrierTable); err != nil {
		return err
	}
	s.barrier.Store(true)
	return nil
}

// Arrive implements store.Barrier.
func (s *DB) Arrive(ctx context.Context, group string, index int, host string, at time.Time) error {
	if err := s.ensureBarrier(ctx); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO barrier_arrivals (group_id, idx, host, arrived_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (group_id, idx) DO UPDATE SET host = excluded.host, arrived_at = excluded.arrived_at`), group, index, host, micros(at))
	return err
}

// Arrivals implements store.Barrier.
func (s *DB) Arrivals(ctx context.Context, group string, since time.Time) ([]store.Arrival, error) {
	if err := s.ensureBarrier(ctx); err != nil {
		return nil, err
	}
	return queryAll(ctx, s.db, s.q(`SELECT idx, host, arrived_at FROM barrier_arrivals WHERE group_id = ? AND arrived_at >= ? ORDER BY idx`), []any{group, micros(since)},
		func(rows *sql.Rows) (store.Arrival, error) {
			var a store.Arrival
			var us int64
			err := rows.Scan(&a.Index, &a.Host, &us)
			a.At = fromMicros(us)
			return a, err
		})
}

// Now implements store.Clock for PostgreSQL: the server's clock_timestamp(). SQLite runs in the
// client's process, so its clock is the client's: errors.ErrUnsupported.
func (s *DB) Now(ctx context.Context) (time.Time, error) {
	if s.d.Name != "postgres" {
		return time.Time{}, fmt.Errorf("%s store: no clock of its own: %w", s.d.Name, errors.ErrUnsupported)
	}
	var us int64
	if err := s.db.QueryRowContext(ctx, `SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::BIGINT`).Scan(&us); err != nil {
		return time.Time{}, err
	}
	return fromMicros(us), nil
}
