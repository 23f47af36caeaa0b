package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"
	_ "modernc.org/sqlite"             // the database/sql driver "sqlite"

	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/internal/testkit/storetest"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
)

// backends runs f against an empty SQLite database and, when a server can be started, an empty
// PostgreSQL database, each with the dialect its backend package gives it.
func backends(t *testing.T, f func(t *testing.T, db *sql.DB, d Dialect)) {
	t.Run("sqlite", func(t *testing.T) {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "h.db")+"?_pragma=busy_timeout(30000)&_txlock=immediate")
		if err != nil {
			t.Fatal(err)
		}
		f(t, db, Dialect{Name: "sqlite", Blob: "BLOB", MaxParams: 32000})
	})
	t.Run("postgres", func(t *testing.T) {
		pg := storetest.StartPostgres(t)
		db, err := sql.Open("pgx", pg.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		f(t, db, Dialect{Name: "postgres", Numbered: true, Blob: "BYTEA", MaxParams: 60000})
	})
}

// putV2 records r as the inferbench of schema version 2 did: the whole run but its samples as
// one document in runs.doc, the scenario rows without documents of their own.
func putV2(ctx context.Context, s *DB, r *result.Run) error {
	stripped := *r
	stripped.Scenarios = make([]result.Scenario, len(r.Scenarios))
	for i, sc := range r.Scenarios {
		sc.Metrics = withoutSamples(sc.Metrics)
		stripped.Scenarios[i] = sc
	}
	doc, err := finite.Marshal(&stripped)
	if err != nil {
		return err
	}
	summary, _ := finite.Marshal(r.Summary)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO runs (id, started_at, finished_at, partial, git_commit, git_branch, host, n_scenarios, summary, doc)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), r.ID, micros(r.StartedAt), micros(r.FinishedAt), boolInt(r.Partial),
		gitField(r, "commit"), gitField(r, "branch"), "box", len(r.Scenarios), string(summary), doc); err != nil {
		return err
	}
	var scRows, mRows [][]any
	for i := range r.Scenarios {
		if err := scenarioRows(r.ID, i, micros(r.StartedAt), &r.Scenarios[i], &scRows, &mRows); err != nil {
			return err
		}
		scRows[i] = scRows[i][:6] // version 2 had no doc column
	}
	if err := s.insertMany(ctx, tx, "scenarios", "run_id, idx, benchmark, scenario, status, params", 6, scRows); err != nil {
		return err
	}
	if err := s.insertMany(ctx, tx, "metrics", "run_id, scenario_idx, name, benchmark, scenario, started_at, unit, better, n, center, mean, std, min, max, cv, p50, p90, p95, p99, samples", metricCols, mRows); err != nil {
		return err
	}
	return tx.Commit()
}

// sameRun fails the test when got is not want, as their JSON encodings tell (samples included).
func sameRun(t *testing.T, got, want *result.Run) {
	t.Helper()
	g, _ := finite.Marshal(got)
	w, _ := finite.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Errorf("run %s read back differs:\n%s\nwant\n%s", want.ID, g, w)
	}
}

// TestOpensOldStore: a store an inferbench of schema version 2 wrote (each run one document)
// opens, is migrated, and reads back its runs, their history and their scenarios' parameters as
// they were stored; a run put afterwards is stored a scenario at a time beside them, and reads
// back the same.
func TestOpensOldStore(t *testing.T) {
	backends(t, func(t *testing.T, db *sql.DB, d Dialect) {
		ctx := context.Background()
		at := storetest.T0
		old, next := storetest.MakeRun("old", at, 1, 10, []string{"a", "b"}, 3, 20), storetest.MakeRun("new", at.Add(time.Hour), 2, 11, []string{"a", "b"}, 3, 20)
		v2 := &DB{db: db, d: d}
		if err := v2.migrate(ctx, 2); err != nil {
			t.Fatal(err)
		}
		if err := putV2(ctx, v2, old); err != nil {
			t.Fatal(err)
		}

		s, err := New(ctx, db, d)
		if err != nil {
			t.Fatalf("opening the version 2 store: %v", err)
		}
		defer s.Close()
		var version int
		if err := db.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&version); err != nil || version != Version || Version < 3 {
			t.Fatalf("schema version %d (%v), want %d (3 or more) once opened", version, err, Version)
		}
		got, err := s.Get(ctx, "old")
		if err != nil {
			t.Fatal(err)
		}
		sameRun(t, got, old)
		if err := s.Put(ctx, next); err != nil {
			t.Fatal(err)
		}
		if got, err = s.Get(ctx, "new"); err != nil {
			t.Fatal(err)
		}
		sameRun(t, got, next)

		// The new run's document is its header; each scenario's row holds its own.
		var doc []byte
		var docs int
		if err := db.QueryRowContext(ctx, s.q(`SELECT doc FROM runs WHERE id = ?`), "new").Scan(&doc); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRowContext(ctx, s.q(`SELECT COUNT(doc) FROM scenarios WHERE run_id = ?`), "new").Scan(&docs); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(doc, []byte(`"scenarios":[]`)) || bytes.Contains(doc, []byte(`batch_size`)) || docs != len(next.Scenarios) {
			t.Errorf("the new run is not stored a scenario at a time: %d scenario documents of %d, run document %s", docs, len(next.Scenarios), doc)
		}

		points, err := s.History(ctx, store.Query{Benchmark: "a", Scenario: "batch_size=2", Metric: "latency_ms.p50"})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, p := range points {
			ids = append(ids, fmt.Sprintf("%s %v %.6g", p.RunID, p.Params["batch_size"], p.Value))
		}
		want := []string{fmt.Sprintf("old 2 %.6g", old.Scenarios[1].Metrics["latency_ms"].Summary.Median), fmt.Sprintf("new 2 %.6g", next.Scenarios[1].Metrics["latency_ms"].Summary.Median)}
		if fmt.Sprint(ids) != fmt.Sprint(want) {
			t.Errorf("history across both layouts: %v, want %v", ids, want)
		}
		infos, err := s.List(ctx, store.Filter{})
		if err != nil || len(infos) != 2 || infos[0].Scenarios != 6 || infos[1].Scenarios != 6 || infos[0].Summary != next.Summary {
			t.Errorf("list: %+v, %v", infos, err)
		}
	})
}
