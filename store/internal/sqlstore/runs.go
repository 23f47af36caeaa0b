package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
	"github.com/inferbench/inferbench/subject"
)

// This file holds the store.Store methods: writing a run (Put: its document, and a row for each
// scenario and each metric with its samples), reading runs (Get, List) and a metric's history
// (History), and the baselines (named runs).

const metricCols = 20

// exists reports whether a run of this ID is stored.
func (s *DB) exists(ctx context.Context, id string) bool {
	var n int
	err := s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM runs WHERE id = ?`), id).Scan(&n)
	return err == nil && n > 0
}

// Put records r: PutStream of its scenarios, putBatch at a time.
func (s *DB) Put(ctx context.Context, r *result.Run) error {
	return s.PutStream(ctx, r, &sliceBatches{rest: r.Scenarios})
}

// PutStream records head and the scenarios b yields. The primary key on runs.id makes a second
// run of the same ID fail (ErrExists) in every process: there is no ON CONFLICT clause, so
// nothing stored is ever replaced; the runs row is inserted first, so that a taken ID is known
// before b is read.
//
// Its memory is one batch: the runs row holds the run's header (the run without scenarios),
// and each scenario's row its own document (the scenario without samples), built and inserted
// with the metric rows a batch at a time. (The whole run's document and rows held 2.4 GB for a
// 297 MB run.json of 200,000 scenarios; docs/measurements/reliability.md.)
func (s *DB) PutStream(ctx context.Context, head *result.Run, b store.Batches) error {
	if head.ID == "" {
		return errors.New("put run: empty run id")
	}
	doc, summary, err := header(head)
	if err != nil {
		return fmt.Errorf("put run %s: %w", head.ID, err)
	}

	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("put run %s: %w", head.ID, err)
	}
	defer tx.Rollback()
	start := micros(head.StartedAt)
	host, _ := head.Environment["hostname"].(string)
	dirty, _ := result.EnvValue(head.Environment, "git", "dirty").(bool)
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO runs (id, started_at, finished_at, partial, git_commit, git_branch, host, n_scenarios, summary, doc, scenario_docs, git_dirty)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)`),
		head.ID, start, micros(head.FinishedAt), boolInt(head.Partial), gitField(head, "commit"),
		gitField(head, "branch"), host, 0, summary, doc, boolInt(dirty)); err != nil {
		tx.Rollback()
		if s.exists(ctx, head.ID) {
			return fmt.Errorf("put run %s: %w (a store never replaces a run)", head.ID, store.ErrExists)
		}
		return fmt.Errorf("put run %s: %w", head.ID, err)
	}
	n := 0
	var scRows, mRows [][]any
	for b.Scan() {
		batch := b.Batch()
		for k := range batch {
			sc := &batch[k]
			if err := scenarioRows(head.ID, n, start, sc, &scRows, &mRows); err != nil {
				return fmt.Errorf("put run %s: scenario %s: %w", head.ID, sc.ID(), err)
			}
			n++
		}
		if err := s.insertMany(ctx, tx, "scenarios", "run_id, idx, benchmark, scenario, status, params, doc, measure", 8, scRows); err != nil {
			return fmt.Errorf("put run %s: %w", head.ID, err)
		}
		if err := s.insertMany(ctx, tx, "metrics", "run_id, scenario_idx, name, benchmark, scenario, started_at, unit, better, n, center, mean, std, min, max, cv, p50, p90, p95, p99, samples", metricCols, mRows); err != nil {
			return fmt.Errorf("put run %s: %w", head.ID, err)
		}
		clear(scRows)
		clear(mRows)
		scRows, mRows = scRows[:0], mRows[:0]
	}
	if err := b.Err(); err != nil {
		return fmt.Errorf("put run %s: %w", head.ID, err)
	}
	// The header as it is now: a reader completes it as it reads (a killed run's summary
	// counts the scenarios of its journal).
	if doc, summary, err = header(head); err != nil {
		return fmt.Errorf("put run %s: %w", head.ID, err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE runs SET n_scenarios = ?, summary = ?, doc = ? WHERE id = ?`), n, summary, doc, head.ID); err != nil {
		return fmt.Errorf("put run %s: %w", head.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("put run %s: %w", head.ID, err)
	}
	return nil
}

// header returns the run's document without its scenarios, and its summary.
func header(head *result.Run) (doc []byte, summary string, err error) {
	hdr := *head
	if hdr.Scenarios != nil {
		hdr.Scenarios = []result.Scenario{}
	}
	if doc, err = finite.Marshal(&hdr); err != nil {
		return nil, "", err
	}
	sum, _ := finite.Marshal(head.Summary)
	return doc, string(sum), nil
}

// scenarioRows appends the row of the run's scenario number idx, with its document, and the
// rows of its metrics with their samples.
func scenarioRows(id string, idx int, start int64, sc *result.Scenario, scRows, mRows *[][]any) error {
	params, err := json.Marshal(sc.Params)
	if err != nil || sc.Params == nil {
		params = []byte("{}")
	}
	stripped := *sc
	stripped.Metrics = withoutSamples(sc.Metrics)
	doc, err := finite.Marshal(&stripped)
	if err != nil {
		return err
	}
	*scRows = append(*scRows, []any{id, idx, sc.Benchmark, sc.Scenario, sc.Status, string(params), doc, measureOf(sc)})
	for _, name := range slices.Sorted(maps.Keys(sc.Metrics)) {
		m := sc.Metrics[name]
		row := []any{id, idx, name, sc.Benchmark, sc.Scenario, start, m.Unit, m.Better, 0}
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
		*mRows = append(*mRows, append(row, blob))
	}
	return nil
}

// putBatch is how many scenarios of a run Put inserts at a time.
const putBatch = 1000

// sliceBatches yields the scenarios of a run in memory putBatch at a time.
type sliceBatches struct {
	rest, batch []result.Scenario
}

// Scan takes the next putBatch scenarios.
func (b *sliceBatches) Scan() bool {
	k := min(putBatch, len(b.rest))
	b.batch, b.rest = b.rest[:k], b.rest[k:]
	return k > 0
}

// Batch returns the batch Scan took.
func (b *sliceBatches) Batch() []result.Scenario { return b.batch }

// Err is nil: a slice does not fail.
func (b *sliceBatches) Err() error { return nil }

// withoutSamples returns the metrics with their samples left out (a copy when any has some).
func withoutSamples(ms map[string]result.Metric) map[string]result.Metric {
	if len(ms) == 0 {
		return ms
	}
	out := make(map[string]result.Metric, len(ms))
	for k, m := range ms {
		m.Samples = nil
		out[k] = m
	}
	return out
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

// gitField returns a field of the run's git fingerprint ("commit", "branch"), or "".
// measureOf is how a scenario was measured, as the scenarios table keeps it: "instructions" when
// counted (Counted set), "" when timed.
func measureOf(sc *result.Scenario) string {
	if len(sc.Counted) > 0 {
		return subject.MeasureInstructions
	}
	return ""
}

func gitField(r *result.Run, key string) string {
	v, _ := result.EnvValue(r.Environment, "git", key).(string)
	return v
}

// Get returns a stored run with its samples: its header (or, for a run stored before the
// scenarios had documents of their own, its whole document), each scenario's document in order,
// then the samples of its metrics. It holds the run and one row at a time.
func (s *DB) Get(ctx context.Context, id string) (*result.Run, error) {
	var doc []byte
	var perScenario int
	err := s.db.QueryRowContext(ctx, s.q(`SELECT doc, scenario_docs FROM runs WHERE id = ?`), id).Scan(&doc, &perScenario)
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
	doc = nil
	if perScenario != 0 {
		if err := s.scenarioDocs(ctx, id, &r); err != nil {
			return nil, fmt.Errorf("run %q: %w", id, err)
		}
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

// scenarioDocs appends to r the documents of its scenarios' rows, in order.
func (s *DB) scenarioDocs(ctx context.Context, id string, r *result.Run) error {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT idx, doc FROM scenarios WHERE run_id = ? ORDER BY idx`), id)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var idx int
		var doc []byte
		if err := rows.Scan(&idx, &doc); err != nil {
			return err
		}
		var sc result.Scenario
		if idx != len(r.Scenarios) || json.Unmarshal(doc, &sc) != nil {
			return fmt.Errorf("corrupt stored document of scenario %d", idx)
		}
		r.Scenarios = append(r.Scenarios, sc)
	}
	return rows.Err()
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
	out, err := queryAll(ctx, s.db, s.q(q), args, func(rows *sql.Rows) (store.RunInfo, error) {
		var ri store.RunInfo
		var start, fin int64
		var partial int
		var summary string
		if err := rows.Scan(&ri.ID, &start, &fin, &partial, &ri.Commit, &ri.Branch, &ri.Host, &ri.Scenarios, &summary); err != nil {
			return ri, err
		}
		ri.StartedAt, ri.FinishedAt, ri.Partial = fromMicros(start), fromMicros(fin), partial != 0
		_ = json.Unmarshal([]byte(summary), &ri.Summary)
		return ri, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// Benchmarks returns the names of the benchmarks with a stored scenario, sorted.
func (s *DB) Benchmarks(ctx context.Context) ([]string, error) {
	out, err := queryAll(ctx, s.db, `SELECT DISTINCT benchmark FROM scenarios ORDER BY benchmark`, nil, func(rows *sql.Rows) (string, error) {
		var b string
		return b, rows.Scan(&b)
	})
	if err != nil {
		return nil, fmt.Errorf("list benchmarks: %w", err)
	}
	return out, nil
}

// History returns one metric statistic over time, oldest first.
func (s *DB) History(ctx context.Context, hq store.Query) ([]store.Point, error) {
	name, col, err := store.SplitMetric(hq.Metric)
	if err != nil {
		return nil, err
	}
	q := `SELECT m.run_id, m.started_at, m.benchmark, m.scenario, m.` + col + `, m.n, r.git_commit, r.git_dirty, sc.params, COALESCE(sc.measure, '')
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
	out, err := queryAll(ctx, s.db, s.q(q), args, func(rows *sql.Rows) (store.Point, error) {
		var p store.Point
		var t int64
		var v float64
		var params sql.NullString
		var dirty int
		if err := rows.Scan(&p.RunID, &t, &p.Benchmark, &p.Scenario, &v, &p.N, &p.Commit, &dirty, &params, &p.Measure); err != nil {
			return p, err
		}
		p.Dirty = dirty != 0
		if params.Valid {
			p.Params = map[string]any{}
			if err := json.Unmarshal([]byte(params.String), &p.Params); err != nil {
				p.Params = nil // unknown: history reads the run
			}
		}
		p.Time, p.Value = fromMicros(t), v
		return p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", hq.Metric, err)
	}
	slices.Reverse(out)
	return out, nil
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
	out, err := queryAll(ctx, s.db, `SELECT name, run_id, created_at, note FROM baselines ORDER BY name`, nil, func(rows *sql.Rows) (store.Baseline, error) {
		var b store.Baseline
		var created int64
		err := rows.Scan(&b.Name, &b.RunID, &created, &b.Note)
		b.CreatedAt = fromMicros(created)
		return b, err
	})
	if err != nil {
		return nil, fmt.Errorf("list baselines: %w", err)
	}
	return out, nil
}
