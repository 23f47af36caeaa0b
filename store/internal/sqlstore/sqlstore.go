// Package sqlstore is the SQL implementation shared by store/sqlite and store/postgres. It speaks
// database/sql in the common subset of both dialects; a Dialect supplies what differs (placeholders,
// the binary type, migration locking, how to retry a busy database).
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/inferbench/inferbench/store"
)

// This file holds the store (DB, New) and what its statements share: placeholders for the dialect
// (q), times as microseconds, samples as bytes, and queryAll. schema.go holds the migrations,
// runs.go the store.Store methods (runs, histories, baselines), barrier.go the barrier.

// Dialect is what differs between SQL backends.
type Dialect struct {
	Name string
	// Numbered placeholders ($1, $2) instead of "?".
	Numbered bool
	// Blob is the binary column type (BLOB, BYTEA).
	Blob string
	// Lock serialises migrations across processes on conn (PostgreSQL: an advisory lock); nil
	// when a write transaction already does (SQLite).
	Lock func(ctx context.Context, conn *sql.Conn) (unlock func(), err error)
	// MaxParams bounds the placeholders in one statement.
	MaxParams int
}

// DB is a store over a database/sql handle.
type DB struct {
	db      *sql.DB
	d       Dialect
	barrier atomic.Bool // the barrier's table exists (barrier.go)
}

var _ store.Store = (*DB)(nil)

// New checks the connection, runs the migrations on db and returns the store. The store owns db:
// Close closes it, and so does New when it fails.
func New(ctx context.Context, db *sql.DB, d Dialect) (*DB, error) {
	if d.MaxParams == 0 {
		d.MaxParams = 999
	}
	s := &DB{db: db, d: d}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.migrate(ctx, len(migrations)); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *DB) Close() error { return s.db.Close() }

// SQL returns the underlying handle (tests and benchmarks).
func (s *DB) SQL() *sql.DB { return s.db }

// q rewrites "?" placeholders for the dialect.
func (s *DB) q(query string) string {
	if !s.d.Numbered {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// queryAll runs a query and scans each of its rows into a T.
func queryAll[T any](ctx context.Context, db *sql.DB, query string, args []any, scan func(*sql.Rows) (T, error)) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// EncodeSamples packs samples as little-endian float64s.
func EncodeSamples(xs []float64) []byte {
	if len(xs) == 0 {
		return nil
	}
	b := make([]byte, 8*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

// DecodeSamples unpacks EncodeSamples.
func DecodeSamples(b []byte) []float64 {
	if len(b) == 0 {
		return nil
	}
	xs := make([]float64, len(b)/8)
	for i := range xs {
		xs[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return xs
}
