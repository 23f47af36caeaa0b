// Package sqlstore is the SQL implementation shared by store/sqlite and store/postgres. It speaks
// database/sql in the common subset of both dialects; a Dialect supplies what differs (placeholders,
// the binary type, migration locking, how to retry a busy database).
package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/inferbench/inferbench/internal/finite"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
)

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
	if err := s.migrate(ctx); err != nil {
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

// migrations are the schema versions, applied in order; never edit one that has shipped, add
// the next. "BLOB" is replaced by the dialect's binary type.
var migrations = []string{
	// 1: runs, scenarios, metrics with samples, baselines.
	`CREATE TABLE runs (
		id TEXT PRIMARY KEY,
		started_at BIGINT NOT NULL,
		finished_at BIGINT NOT NULL DEFAULT 0,
		partial INTEGER NOT NULL DEFAULT 0,
		git_commit TEXT NOT NULL DEFAULT '',
		git_branch TEXT NOT NULL DEFAULT '',
		host TEXT NOT NULL DEFAULT '',
		n_scenarios INTEGER NOT NULL DEFAULT 0,
		summary TEXT NOT NULL DEFAULT '{}',
		doc BLOB NOT NULL
	);
	CREATE INDEX runs_started ON runs (started_at);
	CREATE TABLE scenarios (
		run_id TEXT NOT NULL,
		idx INTEGER NOT NULL,
		benchmark TEXT NOT NULL,
		scenario TEXT NOT NULL,
		status TEXT NOT NULL,
		PRIMARY KEY (run_id, idx)
	);
	CREATE INDEX scenarios_benchmark ON scenarios (benchmark, run_id);
	CREATE TABLE metrics (
		run_id TEXT NOT NULL,
		scenario_idx INTEGER NOT NULL,
		name TEXT NOT NULL,
		benchmark TEXT NOT NULL,
		scenario TEXT NOT NULL,
		started_at BIGINT NOT NULL,
		unit TEXT NOT NULL DEFAULT '',
		better TEXT NOT NULL DEFAULT '',
		n INTEGER NOT NULL DEFAULT 0,
		center DOUBLE PRECISION,
		mean DOUBLE PRECISION,
		std DOUBLE PRECISION,
		min DOUBLE PRECISION,
		max DOUBLE PRECISION,
		cv DOUBLE PRECISION,
		p50 DOUBLE PRECISION,
		p90 DOUBLE PRECISION,
		p95 DOUBLE PRECISION,
		p99 DOUBLE PRECISION,
		samples BLOB,
		PRIMARY KEY (run_id, scenario_idx, name)
	);
	CREATE INDEX metrics_history ON metrics (name, benchmark, started_at);
	CREATE TABLE baselines (
		name TEXT PRIMARY KEY,
		run_id TEXT NOT NULL,
		created_at BIGINT NOT NULL,
		note TEXT NOT NULL DEFAULT ''
	)`,
	// 2: each scenario's parameters (JSON), so that a history point carries its scenario's
	// identity without reading the run. NULL for runs stored before: unknown.
	`ALTER TABLE scenarios ADD COLUMN params TEXT`,
}

// Version is the schema version this code writes.
var Version = len(migrations)

func (s *DB) migrate(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if s.d.Lock != nil {
		unlock, err := s.d.Lock(ctx, conn)
		if err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		defer unlock()
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	for v := 1; v <= len(migrations); v++ {
		if err := s.apply(ctx, conn, v); err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
	}
	var newest int
	if err := conn.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&newest); err != nil {
		return err
	}
	if newest > len(migrations) {
		return fmt.Errorf("the store has schema version %d, newer than this inferbench knows (%d): upgrade inferbench", newest, len(migrations))
	}
	return nil
}

func (s *DB) apply(ctx context.Context, conn *sql.Conn, v int) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM schema_migrations WHERE version = ?`), v).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	for _, stmt := range strings.Split(migrations[v-1], ";") {
		stmt = strings.TrimSpace(strings.ReplaceAll(stmt, "BLOB", s.d.Blob))
		if stmt == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`), v, time.Now().UnixMicro()); err != nil {
		return err
	}
	return tx.Commit()
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

func envString(env map[string]any, keys ...string) string {
	var cur any = env
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[k]
	}
	s, _ := cur.(string)
	return s
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

const metricCols = 20

// exists reports whether a run of this ID is stored.
func (s *DB) exists(ctx context.Context, id string) bool {
	var n int
	err := s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM runs WHERE id = ?`), id).Scan(&n)
	return err == nil && n > 0
}

// Put records r. The primary key on runs.id makes a second Put of the same ID fail (ErrExists)
// in every process: there is no ON CONFLICT clause, so nothing stored is ever replaced.
func (s *DB) Put(ctx context.Context, r *result.Run) error {
	if r.ID == "" {
		return errors.New("put run: empty run id")
	}
	// The document keeps everything but the samples, which go to the metrics rows.
	stripped := *r
	stripped.Scenarios = make([]result.Scenario, len(r.Scenarios))
	for i, sc := range r.Scenarios {
		if len(sc.Metrics) > 0 {
			ms := make(map[string]result.Metric, len(sc.Metrics))
			for k, m := range sc.Metrics {
				m.Samples = nil
				ms[k] = m
			}
			sc.Metrics = ms
		}
		stripped.Scenarios[i] = sc
	}
	doc, err := finite.Marshal(&stripped)
	if err != nil {
		return fmt.Errorf("put run %s: %w", r.ID, err)
	}
	summary, _ := finite.Marshal(r.Summary)

	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("put run %s: %w", r.ID, err)
	}
	defer tx.Rollback()
	start := micros(r.StartedAt)
	host, _ := r.Environment["hostname"].(string)
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO runs (id, started_at, finished_at, partial, git_commit, git_branch, host, n_scenarios, summary, doc)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		r.ID, start, micros(r.FinishedAt), boolInt(r.Partial), envString(r.Environment, "git", "commit"),
		envString(r.Environment, "git", "branch"), host, len(r.Scenarios), string(summary), doc); err != nil {
		tx.Rollback()
		if s.exists(ctx, r.ID) {
			return fmt.Errorf("put run %s: %w (a store never replaces a run)", r.ID, store.ErrExists)
		}
		return fmt.Errorf("put run %s: %w", r.ID, err)
	}
	scRows := make([][]any, 0, len(r.Scenarios))
	var mRows [][]any
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		params, err := json.Marshal(sc.Params)
		if err != nil || sc.Params == nil {
			params = []byte("{}")
		}
		scRows = append(scRows, []any{r.ID, i, sc.Benchmark, sc.Scenario, sc.Status, string(params)})
		names := slices.Sorted(maps.Keys(sc.Metrics))
		for _, name := range names {
			m := sc.Metrics[name]
			row := []any{r.ID, i, name, sc.Benchmark, sc.Scenario, start, m.Unit, m.Better, 0}
			center, ok := m.Center()
			row = append(row, nullable(center, ok))
			if sm := m.Summary; sm != nil {
				row[8] = sm.N
				row = append(row, sm.Mean, sm.Std, sm.Min, sm.Max, sm.CV, sm.Median, sm.P90, sm.P95, sm.P99)
			} else {
				n := 0
				if ok {
					n = 1
				}
				row[8] = n
				row = append(row, nil, nil, nil, nil, nil, nil, nil, nil, nil)
			}
			var blob any
			if b := EncodeSamples(m.Samples); b != nil {
				blob = b
			}
			mRows = append(mRows, append(row, blob))
		}
	}
	if err := s.insertMany(ctx, tx, "scenarios", "run_id, idx, benchmark, scenario, status, params", 6, scRows); err != nil {
		return fmt.Errorf("put run %s: %w", r.ID, err)
	}
	if err := s.insertMany(ctx, tx, "metrics", "run_id, scenario_idx, name, benchmark, scenario, started_at, unit, better, n, center, mean, std, min, max, cv, p50, p90, p95, p99, samples", metricCols, mRows); err != nil {
		return fmt.Errorf("put run %s: %w", r.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("put run %s: %w", r.ID, err)
	}
	return nil
}

func nullable(v float64, ok bool) any {
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// insertMany inserts rows with multi-row VALUES statements, as many rows per statement as the
// dialect's placeholder limit allows.
func (s *DB) insertMany(ctx context.Context, tx *sql.Tx, table, cols string, width int, rows [][]any) error {
	per := max(1, s.d.MaxParams/width)
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", width), ", ") + ")"
	var stmt *sql.Stmt
	stmtRows := 0
	defer func() {
		if stmt != nil {
			stmt.Close()
		}
	}()
	args := make([]any, 0, per*width)
	for len(rows) > 0 {
		k := min(per, len(rows))
		if stmt == nil || stmtRows != k {
			if stmt != nil {
				stmt.Close()
			}
			q := "INSERT INTO " + table + " (" + cols + ") VALUES " + strings.TrimSuffix(strings.Repeat(one+", ", k), ", ")
			var err error
			if stmt, err = tx.PrepareContext(ctx, s.q(q)); err != nil {
				return err
			}
			stmtRows = k
		}
		args = args[:0]
		for _, r := range rows[:k] {
			args = append(args, r...)
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return err
		}
		rows = rows[k:]
	}
	return nil
}

// Get returns a stored run with its samples.
func (s *DB) Get(ctx context.Context, id string) (*result.Run, error) {
	var doc []byte
	err := s.db.QueryRowContext(ctx, s.q(`SELECT doc FROM runs WHERE id = ?`), id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %q: %w (see 'inferbench history --runs')", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("run %q: %w", id, err)
	}
	var r result.Run
	if err := json.NewDecoder(bytes.NewReader(doc)).Decode(&r); err != nil {
		return nil, fmt.Errorf("run %q: corrupt stored document: %w", id, err)
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT scenario_idx, name, samples FROM metrics WHERE run_id = ? AND samples IS NOT NULL`), id)
	if err != nil {
		return nil, fmt.Errorf("run %q: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var idx int
		var name string
		var blob []byte
		if err := rows.Scan(&idx, &name, &blob); err != nil {
			return nil, fmt.Errorf("run %q: %w", id, err)
		}
		if idx < 0 || idx >= len(r.Scenarios) {
			continue
		}
		sc := &r.Scenarios[idx]
		if m, ok := sc.Metrics[name]; ok {
			m.Samples = DecodeSamples(blob)
			sc.Metrics[name] = m
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("run %q: %w", id, err)
	}
	return &r, nil
}

// List returns run headers, newest first.
func (s *DB) List(ctx context.Context, f store.Filter) ([]store.RunInfo, error) {
	q := `SELECT id, started_at, finished_at, partial, git_commit, git_branch, host, n_scenarios, summary FROM runs WHERE 1 = 1`
	var args []any
	if f.Benchmark != "" {
		q += ` AND id IN (SELECT run_id FROM scenarios WHERE benchmark = ?)`
		args = append(args, f.Benchmark)
	}
	if !f.Since.IsZero() {
		q += ` AND started_at >= ?`
		args = append(args, micros(f.Since))
	}
	if !f.Until.IsZero() {
		q += ` AND started_at < ?`
		args = append(args, micros(f.Until))
	}
	q += ` ORDER BY started_at DESC, id DESC`
	if f.Limit > 0 {
		q += ` LIMIT ` + strconv.Itoa(f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.q(q), args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []store.RunInfo
	for rows.Next() {
		var ri store.RunInfo
		var start, fin int64
		var partial int
		var summary string
		if err := rows.Scan(&ri.ID, &start, &fin, &partial, &ri.Commit, &ri.Branch, &ri.Host, &ri.Scenarios, &summary); err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		ri.StartedAt, ri.FinishedAt, ri.Partial = fromMicros(start), fromMicros(fin), partial != 0
		_ = json.Unmarshal([]byte(summary), &ri.Summary)
		out = append(out, ri)
	}
	return out, rows.Err()
}

// SetBaseline names a stored run.
func (s *DB) SetBaseline(ctx context.Context, b store.Baseline) error {
	if b.Name == "" {
		return errors.New("baseline: empty name")
	}
	var n int
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM runs WHERE id = ?`), b.RunID).Scan(&n); err != nil {
		return fmt.Errorf("baseline %s: %w", b.Name, err)
	}
	if n == 0 {
		return fmt.Errorf("baseline %s: run %q: %w", b.Name, b.RunID, store.ErrNotFound)
	}
	if b.CreatedAt.IsZero() {
		b.CreatedAt = time.Now()
	}
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO baselines (name, run_id, created_at, note) VALUES (?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET run_id = excluded.run_id, created_at = excluded.created_at, note = excluded.note`),
		b.Name, b.RunID, micros(b.CreatedAt), b.Note)
	if err != nil {
		return fmt.Errorf("baseline %s: %w", b.Name, err)
	}
	return nil
}

// Baseline returns a named baseline.
func (s *DB) Baseline(ctx context.Context, name string) (store.Baseline, error) {
	b := store.Baseline{Name: name}
	var created int64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT run_id, created_at, note FROM baselines WHERE name = ?`), name).Scan(&b.RunID, &created, &b.Note)
	if errors.Is(err, sql.ErrNoRows) {
		return b, fmt.Errorf("baseline %q: %w (set one with 'inferbench baseline set %s RUN')", name, store.ErrNotFound, name)
	}
	if err != nil {
		return b, fmt.Errorf("baseline %q: %w", name, err)
	}
	b.CreatedAt = fromMicros(created)
	return b, nil
}

// ListBaselines returns every baseline by name.
func (s *DB) ListBaselines(ctx context.Context) ([]store.Baseline, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, run_id, created_at, note FROM baselines ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list baselines: %w", err)
	}
	defer rows.Close()
	var out []store.Baseline
	for rows.Next() {
		var b store.Baseline
		var created int64
		if err := rows.Scan(&b.Name, &b.RunID, &created, &b.Note); err != nil {
			return nil, fmt.Errorf("list baselines: %w", err)
		}
		b.CreatedAt = fromMicros(created)
		out = append(out, b)
	}
	return out, rows.Err()
}

// History returns one metric statistic over time, oldest first.
func (s *DB) History(ctx context.Context, hq store.Query) ([]store.Point, error) {
	name, col, err := store.SplitMetric(hq.Metric)
	if err != nil {
		return nil, err
	}
	q := `SELECT m.run_id, m.started_at, m.benchmark, m.scenario, m.` + col + `, m.n, r.git_commit, sc.params
		FROM metrics m JOIN runs r ON r.id = m.run_id
		LEFT JOIN scenarios sc ON sc.run_id = m.run_id AND sc.idx = m.scenario_idx WHERE m.name = ?`
	args := []any{name}
	if hq.Benchmark != "" {
		q += ` AND m.benchmark = ?`
		args = append(args, hq.Benchmark)
	}
	if hq.Scenario != "" {
		q += ` AND m.scenario = ?`
		args = append(args, hq.Scenario)
	}
	if !hq.Since.IsZero() {
		q += ` AND m.started_at >= ?`
		args = append(args, micros(hq.Since))
	}
	if !hq.Until.IsZero() {
		q += ` AND m.started_at < ?`
		args = append(args, micros(hq.Until))
	}
	q += ` AND m.` + col + ` IS NOT NULL ORDER BY m.started_at DESC, m.run_id DESC, m.benchmark DESC, m.scenario DESC`
	if hq.Limit > 0 {
		q += ` LIMIT ` + strconv.Itoa(hq.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.q(q), args...)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", hq.Metric, err)
	}
	defer rows.Close()
	var out []store.Point
	for rows.Next() {
		var p store.Point
		var t int64
		var v float64
		var params sql.NullString
		if err := rows.Scan(&p.RunID, &t, &p.Benchmark, &p.Scenario, &v, &p.N, &p.Commit, &params); err != nil {
			return nil, fmt.Errorf("history %s: %w", hq.Metric, err)
		}
		if params.Valid {
			p.Params = map[string]any{}
			if err := json.Unmarshal([]byte(params.String), &p.Params); err != nil {
				p.Params = nil // unknown: history reads the run
			}
		}
		p.Time, p.Value = fromMicros(t), v
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history %s: %w", hq.Metric, err)
	}
	slices.Reverse(out)
	return out, nil
}
