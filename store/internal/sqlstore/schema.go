package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// This file holds the schema: its migrations and how they are applied.

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
	// 3: each scenario's document (the scenario without its samples, JSON) in its row, and in
	// runs.doc only the run's header, so that a run is written and read a scenario at a time;
	// scenario_docs says a run is stored so. Runs stored before keep their whole document in
	// runs.doc (scenario_docs 0), and are read as they were.
	`ALTER TABLE scenarios ADD COLUMN doc BLOB;
	ALTER TABLE runs ADD COLUMN scenario_docs INTEGER NOT NULL DEFAULT 0`,
	// 4: whether a run's tree was dirty (git) and how each scenario was measured ("" timed,
	// "instructions" counted), so that a history point says both without reading the run: a
	// trend never mixes valgrind's time with a timed run's, and a dirty run is marked. Runs
	// stored before read as clean and timed.
	`ALTER TABLE runs ADD COLUMN git_dirty INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE scenarios ADD COLUMN measure TEXT NOT NULL DEFAULT ''`,
}

// Version is the schema version this code writes.
var Version = len(migrations)

// Note: runs stored before migration 3 are not rewritten a scenario at a time when the store
// is opened: that would hold each such run whole (the memory the layout saves), make the first
// open of a large store slow, and take a lock other processes wait on. Get reads both layouts.

// migrate applies the migrations up to version upTo (len(migrations) but in tests of a store
// an older inferbench left).
func (s *DB) migrate(ctx context.Context, upTo int) error {
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
	for v := 1; v <= upTo; v++ {
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
