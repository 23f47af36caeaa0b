// Package store keeps the history of runs: every run with its scenarios, metrics and raw samples,
// named baselines, and time series of one metric for trends and change points.
//
// A Store is made of small interfaces (Runs, Baselines, Historian) so that a caller asks only for
// what it uses. Backends live in leaf packages and register a constructor by URL scheme:
// store/sqlite (the default, pure Go, a file in the project) and store/postgres (shared history
// for a team). Open picks one from a location:
//
//	s, err := store.Open(ctx, store.Params{URL: os.Getenv("INFERBENCH_STORE"), Dir: "."})
//
// An empty URL means the SQLite file DefaultPath under Params.Dir.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/inferbench/inferbench/result"
)

// DefaultPath is where the default SQLite store lives, relative to the project directory.
const DefaultPath = ".inferbench/history.db"

// EnvVar names the environment variable that chooses the store when no --store flag is given.
const EnvVar = "INFERBENCH_STORE"

// ErrNotFound is returned (wrapped) when a run or baseline does not exist.
var ErrNotFound = errors.New("not found")

// ErrExists is returned (wrapped) by Put when a run of the same ID is already stored: a store
// never replaces a run. The caller gives the run a new ID (result.NewID) or reports the error.
var ErrExists = errors.New("already stored")

// Runs stores whole runs.
type Runs interface {
	// Put records a run with its scenarios, metrics and samples. A run whose ID is already stored
	// is never replaced: Put returns an error wrapping ErrExists and changes nothing.
	Put(ctx context.Context, r *result.Run) error
	// Get returns the run with this ID, samples included, or an error wrapping ErrNotFound.
	Get(ctx context.Context, id string) (*result.Run, error)
	// List returns the runs matching f, newest first.
	List(ctx context.Context, f Filter) ([]RunInfo, error)
}

// Batches yields a run's scenarios a batch at a time, as bufio.Scanner yields tokens: Scan
// reads the next batch, Batch returns it (valid until the next Scan) and Err the error that
// ended them, nil at their end.
type Batches interface {
	Scan() bool
	Batch() []result.Scenario
	Err() error
}

// Streamer is a Runs that records a run from batches of its scenarios, holding one batch at a
// time rather than the whole run (importing a large run.json). store/sqlite and store/postgres
// are Streamers.
type Streamer interface {
	// PutStream records head (its Scenarios left out) with the scenarios b yields, in order, as
	// Put records a run: all of it, or nothing when anything fails (b's Err included). head is
	// recorded as it is once b is read to its end (b may complete it: a summary). A run whose
	// ID is already stored is an error wrapping ErrExists, returned before b is read.
	PutStream(ctx context.Context, head *result.Run, b Batches) error
}

// Baselines names runs: "main", "release-1.2".
type Baselines interface {
	// SetBaseline points name at a stored run, replacing any previous run of that name.
	SetBaseline(ctx context.Context, b Baseline) error
	// Baseline returns the baseline of this name, or an error wrapping ErrNotFound.
	Baseline(ctx context.Context, name string) (Baseline, error)
	// ListBaselines returns every baseline, sorted by name.
	ListBaselines(ctx context.Context) ([]Baseline, error)
}

// Historian answers time-series questions about one metric.
type Historian interface {
	// History returns the points of one metric statistic, oldest first.
	History(ctx context.Context, q Query) ([]Point, error)
	// Benchmarks returns the names of the benchmarks with a stored scenario, sorted.
	Benchmarks(ctx context.Context) ([]string, error)
}

// Store is a complete history backend.
type Store interface {
	Runs
	Baselines
	Historian
	io.Closer
}

// Filter selects runs for List. Zero fields select everything.
type Filter struct {
	Benchmark string    // runs with at least one scenario of this benchmark
	Since     time.Time // started at or after
	Until     time.Time // started before
	Limit     int       // at most this many (newest first); 0 means no limit
}

// RunInfo is a run's header, as List returns it.
type RunInfo struct {
	ID         string         `json:"id"`
	StartedAt  time.Time      `json:"started_at"`
	FinishedAt time.Time      `json:"finished_at,omitzero"`
	Partial    bool           `json:"partial"`
	Commit     string         `json:"commit,omitempty"`
	Branch     string         `json:"branch,omitempty"`
	Host       string         `json:"host,omitempty"`
	Scenarios  int            `json:"scenarios"`
	Summary    result.Summary `json:"summary"`
}

// Baseline is a named reference to a stored run.
type Baseline struct {
	Name      string    `json:"name"`
	RunID     string    `json:"run_id"`
	CreatedAt time.Time `json:"created_at"`
	Note      string    `json:"note,omitempty"`
}

// Query asks for the history of one metric statistic.
type Query struct {
	Benchmark string // "" for every benchmark
	Scenario  string // "" for every scenario of the benchmark(s)
	// Metric is "name.stat" (latency_ms.p95) or a bare name, which means its center (the value,
	// or the median of its distribution). Stats: see Stats.
	Metric string
	Since  time.Time // zero: from the beginning
	Until  time.Time // zero: until now
	Limit  int       // at most this many points (the newest); 0 means no limit
}

// Point is one value of a metric in one stored run.
type Point struct {
	RunID     string    `json:"run_id"`
	Time      time.Time `json:"time"`
	Benchmark string    `json:"benchmark"`
	Scenario  string    `json:"scenario"`
	Value     float64   `json:"value"`
	N         int       `json:"n"`
	Commit    string    `json:"commit,omitempty"`
	// Dirty says the run's tree had uncommitted changes: the point is not Commit's code.
	Dirty bool `json:"dirty,omitempty"`
	// Measure is how the scenario was measured: "" timed, "instructions" counted under valgrind
	// (its latency_ms is then valgrind's time, no trend of a timed run's).
	Measure string `json:"measure,omitempty"`
	// Params are the parameters of the point's scenario, its identity beside the benchmark
	// (empty, not nil, for a scenario without any); nil when the store does not know them (a run
	// stored by an older inferbench), and a reader that needs them reads the run.
	Params map[string]any `json:"params,omitempty"`
}

// stats are the statistics of a metric kept as queryable columns, with the column that holds
// each. "center" is a value metric's value or a distribution's median.
var stats = map[string]string{
	"center": "center", "value": "center",
	"mean": "mean", "std": "std", "min": "min", "max": "max", "cv": "cv",
	"p50": "p50", "median": "p50", "p90": "p90", "p95": "p95", "p99": "p99",
	"n": "n",
}

// SplitMetric splits "latency_ms.p95" into the metric name and the column holding the statistic.
// A bare name means "center".
func SplitMetric(m string) (name, column string, err error) {
	name, stat, ok := strings.Cut(m, ".")
	if !ok {
		return m, "center", nil
	}
	col, ok := stats[stat]
	if !ok {
		keys := slices.Sorted(maps.Keys(stats))
		return "", "", fmt.Errorf("metric %q: unknown statistic %q (want one of %s)", m, stat, strings.Join(keys, ", "))
	}
	if name == "" {
		return "", "", fmt.Errorf("metric %q: empty name", m)
	}
	return name, col, nil
}

// Params locate and configure a store.
type Params struct {
	// URL chooses the backend: "postgres://..." or "postgresql://...", "sqlite:PATH" or a plain
	// file path; empty means DefaultPath under Dir.
	URL string
	// Dir is the project directory that relative SQLite paths are taken from ("" for the
	// working directory).
	Dir string
}

// Opener is the constructor shape of every backend.
type Opener func(ctx context.Context, p Params) (Store, error)

var (
	regMu   sync.RWMutex
	openers = map[string]Opener{}
)

// Register makes a backend available under URL schemes ("sqlite", "postgres"). Backends call it
// from init; the CLI imports them.
func Register(open Opener, schemes ...string) {
	regMu.Lock()
	defer regMu.Unlock()
	for _, s := range schemes {
		openers[s] = open
	}
}

// schemeOf returns the backend scheme a URL selects: the part before "://" or ":" when it names a
// registered backend, else "sqlite" (a file path).
func schemeOf(url string) string {
	if i := strings.Index(url, ":"); i > 1 { // i > 1 keeps Windows drive letters as paths
		s := url[:i]
		regMu.RLock()
		_, ok := openers[s]
		regMu.RUnlock()
		if ok {
			return s
		}
	}
	return "sqlite"
}

// Open opens the store that p.URL names, running its migrations.
func Open(ctx context.Context, p Params) (Store, error) {
	s := schemeOf(p.URL)
	regMu.RLock()
	open, ok := openers[s]
	regMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("store %q: no %s backend compiled in (import github.com/inferbench/inferbench/store/%s)", Redact(p.URL), s, s)
	}
	st, err := open(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", Redact(p.URL), err)
	}
	return st, nil
}

// SQLitePath returns the file a sqlite URL names: "sqlite:PATH", "sqlite://PATH" or PATH, taken
// relative to dir; DefaultPath under dir when url is empty.
func SQLitePath(url, dir string) string {
	p := url
	p = strings.TrimPrefix(p, "sqlite://")
	p = strings.TrimPrefix(p, "sqlite:")
	if p == "" {
		p = DefaultPath
	}
	if dir != "" && !filepath.IsAbs(p) && p != ":memory:" {
		p = filepath.Join(dir, p)
	}
	return p
}

// Redact hides the password of a URL for messages.
func Redact(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return url
	}
	user := rest[:at]
	if u, _, ok := strings.Cut(user, ":"); ok {
		user = u + ":xxxxx"
	}
	return scheme + "://" + user + rest[at:]
}

// Latest returns the newest stored run (samples included), or an error wrapping ErrNotFound.
func Latest(ctx context.Context, s Runs, f Filter) (*result.Run, error) {
	f.Limit = 1
	infos, err := s.List(ctx, f)
	if err != nil {
		return nil, err
	}
	if len(infos) == 0 {
		return nil, fmt.Errorf("latest run: %w (the store is empty; record one with 'inferbench run')", ErrNotFound)
	}
	return s.Get(ctx, infos[0].ID)
}

// Resolve returns the run a reference names: "latest", "baseline:NAME", or a run ID.
func Resolve(ctx context.Context, s Store, ref string) (*result.Run, error) {
	switch {
	case ref == "latest":
		return Latest(ctx, s, Filter{})
	case strings.HasPrefix(ref, "baseline:"):
		b, err := s.Baseline(ctx, strings.TrimPrefix(ref, "baseline:"))
		if err != nil {
			return nil, err
		}
		return s.Get(ctx, b.RunID)
	}
	return s.Get(ctx, ref)
}
