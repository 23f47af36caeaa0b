// Package storetest is the conformance suite every store backend passes, and helpers for tests
// that need a store: synthetic runs and a throw-away PostgreSQL server.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/store"
)

// T0 is the start time of the first synthetic run.
var T0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// MakeRun returns a synthetic finished run: benchmarks × scenarios with latency samples drawn
// around center (lognormal, 5% spread, seeded by seed), a throughput value and a memory value.
func MakeRun(id string, at time.Time, seed uint64, center float64, benchmarks []string, scenariosPer, samples int) *result.Run {
	rng := rand.New(rand.NewPCG(seed, 7))
	r := &result.Run{
		Schema: result.Schema, ID: id, StartedAt: at, FinishedAt: at.Add(time.Minute),
		Environment: map[string]any{"hostname": "box", "git": map[string]any{"commit": "c" + id, "branch": "main", "dirty": false}},
		Scenarios:   []result.Scenario{},
	}
	for _, b := range benchmarks {
		for j := 0; j < scenariosPer; j++ {
			xs := make([]float64, samples)
			for k := range xs {
				xs[k] = center * (1 + 0.05*rng.NormFloat64())
			}
			sum, _ := stats.Summarize(xs)
			lat := result.NewMetric("latency_ms")
			lat.Summary, lat.Samples = &sum, xs
			tp := result.NewMetric("throughput_ips")
			v := 1000 / sum.Median
			tp.Value = &v
			mem := result.NewMetric("memory_mb")
			mv := 100 + float64(j)
			mem.Value = &mv
			r.Scenarios = append(r.Scenarios, result.Scenario{
				Benchmark: b, Scenario: fmt.Sprintf("batch_size=%d", 1<<j), Subject: "mock",
				Params: map[string]any{"batch_size": float64(int(1) << j)}, Status: result.StatusOK, StartedAt: at,
				Iterations: result.Iterations{Measured: samples},
				Metrics:    map[string]result.Metric{"latency_ms": lat, "throughput_ips": tp, "memory_mb": mem},
			})
		}
	}
	r.Tally()
	return r
}

// Batches yields Scenarios Size at a time (store.Batches); with Fail, Scan fails with it once
// FailAt batches were read.
type Batches struct {
	Scenarios []result.Scenario
	Size      int
	FailAt    int
	Fail      error
	Scans     int // batches read
	batch     []result.Scenario
	err       error
}

// Scan reads the next batch.
func (b *Batches) Scan() bool {
	if b.Fail != nil && b.Scans >= b.FailAt {
		b.err = b.Fail
		return false
	}
	k := min(b.Size, len(b.Scenarios))
	if k == 0 {
		return false
	}
	b.Scans++
	b.batch, b.Scenarios = b.Scenarios[:k], b.Scenarios[k:]
	return true
}

// Batch returns the batch Scan read.
func (b *Batches) Batch() []result.Scenario { return b.batch }

// Err returns Fail once Scan failed with it.
func (b *Batches) Err() error { return b.err }

// Fresh returns the parameters of a new, empty store of the backend under test.
type Fresh func(t *testing.T) store.Params

func open(t *testing.T, p store.Params) store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), p)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Run runs the conformance suite: each of suite's cases as a subtest of its name, on a fresh
// store of the backend under test.
func Run(t *testing.T, fresh Fresh) {
	for _, c := range suite {
		t.Run(c.name, func(t *testing.T) { c.run(t, fresh) })
	}
}

// suite lists the conformance cases in the order Run runs them.
var suite = []struct {
	name string
	run  func(t *testing.T, fresh Fresh)
}{
	{"RoundTrip", testRoundTrip},
	{"PutStream", testPutStream},
	{"PutNeverReplaces", testPutNeverReplaces},
	{"ConcurrentSameID", testConcurrentSameID},
	{"ListAndLatest", testListAndLatest},
	{"Baselines", testBaselines},
	{"History", testHistory},
	{"ReopenKeepsData", testReopenKeepsData},
	{"ConcurrentWriters", testConcurrentWriters},
}

// suiteBenchmarks are the benchmarks of the cases' synthetic runs.
var suiteBenchmarks = []string{"resnet", "bert"}

// testRoundTrip: a run put reads back the same, budgets, failed scenarios and errors
// included, and a missing ID is ErrNotFound.
func testRoundTrip(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	s := open(t, fresh(t))
	want := MakeRun("r1", T0, 1, 10, suiteBenchmarks, 2, 30)
	want.Scenarios[0].Budgets = map[string]string{"latency_ms.p95": "<= 25"}
	want.Scenarios[1].Status = result.StatusFailed
	want.Scenarios[1].Error = "boom"
	if err := s.Put(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got, cmpopts.EquateApproxTime(time.Microsecond)); d != "" {
		t.Errorf("Get after Put (-want +got):\n%s", d)
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(missing) = %v, want ErrNotFound", err)
	}
}

// testPutStream: a run recorded from batches of its scenarios (store.PutStream: an import of a
// large run.json) reads back as the same run put whole; a taken ID is known before a batch is
// read; a stream that fails stores nothing, and the ID stays free.
func testPutStream(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	st := open(t, fresh(t))
	s, ok := st.(store.Streamer)
	if !ok {
		t.Skip("the backend is no store.Streamer")
	}
	want := MakeRun("s1", T0, 1, 10, suiteBenchmarks, 5, 7)
	head := *want
	head.Scenarios = []result.Scenario{}
	must(t, s.PutStream(ctx, &head, &Batches{Scenarios: want.Scenarios, Size: 3}))
	got, err := st.Get(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got, cmpopts.EquateApproxTime(time.Microsecond)); d != "" {
		t.Errorf("Get after PutStream (-want +got):\n%s", d)
	}
	if infos, err := st.List(ctx, store.Filter{}); err != nil || len(infos) != 1 || infos[0].Scenarios != 10 {
		t.Errorf("List after PutStream: %+v, %v; want 1 run of 10 scenarios", infos, err)
	}
	taken := &Batches{Scenarios: want.Scenarios, Size: 3}
	if err := s.PutStream(ctx, &head, taken); !errors.Is(err, store.ErrExists) || taken.Scans > 0 {
		t.Errorf("PutStream of a stored ID = %v after %d batches read, want ErrExists before any", err, taken.Scans)
	}
	other := head
	other.ID = "s2"
	boom := errors.New("the file ends early")
	if err := s.PutStream(ctx, &other, &Batches{Scenarios: want.Scenarios, Size: 3, FailAt: 2, Fail: boom}); !errors.Is(err, boom) {
		t.Errorf("PutStream of a failing stream = %v, want its error", err)
	}
	if _, err := st.Get(ctx, "s2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after a failed stream, Get = %v, want ErrNotFound", err)
	}
	if pts, err := st.History(ctx, store.Query{Metric: "latency_ms"}); err != nil || len(pts) != 10 {
		t.Errorf("history has %d points (%v), want the first run's 10", len(pts), err)
	}
	must(t, s.PutStream(ctx, &other, &Batches{Scenarios: want.Scenarios, Size: 4}))
}

// testPutNeverReplaces: a second run with an ID already stored (two CI jobs in the same second,
// an import of a file of the same name) must not replace the first: Put fails with ErrExists and
// the first run, its scenarios and its history are unchanged. (Before, Put was an upsert.)
func testPutNeverReplaces(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	s := open(t, fresh(t))
	first := MakeRun("r1", T0, 1, 10, suiteBenchmarks[:1], 1, 5)
	must(t, s.Put(ctx, first))
	second := MakeRun("r1", T0, 2, 99, suiteBenchmarks, 3, 30)
	if err := s.Put(ctx, second); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second Put of r1 = %v, want ErrExists", err)
	}
	got, err := s.Get(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(first, got, cmpopts.EquateApproxTime(time.Microsecond)); d != "" {
		t.Errorf("the stored run changed (-first +got):\n%s", d)
	}
	pts, err := s.History(ctx, store.Query{Metric: "latency_ms"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 1 {
		t.Errorf("history has %d points, want the first run's 1", len(pts))
	}
}

// testConcurrentSameID: eight writers put a run of the same ID at once: exactly one is stored,
// the others get ErrExists, none is silently lost.
func testConcurrentSameID(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	p := fresh(t)
	const writers = 8
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := 0; w < writers; w++ {
		st := open(t, p)
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			errs[w] = st.Put(ctx, MakeRun("same", T0, uint64(w), 10, suiteBenchmarks, 1, 5))
		}(w)
	}
	wg.Wait()
	stored := 0
	for _, err := range errs {
		switch {
		case err == nil:
			stored++
		case !errors.Is(err, store.ErrExists):
			t.Errorf("concurrent Put: %v, want nil or ErrExists", err)
		}
	}
	if stored != 1 {
		t.Errorf("%d Puts of the same ID succeeded, want 1", stored)
	}
}

// testListAndLatest: List filters by benchmark and time window, newest first, up to its limit,
// and Latest and Resolve("latest") find the newest run.
func testListAndLatest(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	s := open(t, fresh(t))
	if _, err := store.Latest(ctx, s, store.Filter{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Latest on empty store = %v, want ErrNotFound", err)
	}
	for i := 0; i < 5; i++ {
		b := suiteBenchmarks[i%2]
		if err := s.Put(ctx, MakeRun(fmt.Sprintf("r%d", i), T0.Add(time.Duration(i)*24*time.Hour), uint64(i), 10, []string{b}, 1, 10)); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(infos []store.RunInfo) []string {
		var out []string
		for _, i := range infos {
			out = append(out, i.ID)
		}
		return out
	}
	cases := []struct {
		name string
		f    store.Filter
		want []string
	}{
		{"all, newest first", store.Filter{}, []string{"r4", "r3", "r2", "r1", "r0"}},
		{"by benchmark", store.Filter{Benchmark: "bert"}, []string{"r3", "r1"}},
		{"window", store.Filter{Since: T0.Add(24 * time.Hour), Until: T0.Add(3 * 24 * time.Hour)}, []string{"r2", "r1"}},
		{"limit", store.Filter{Limit: 2}, []string{"r4", "r3"}},
	}
	for _, c := range cases {
		got, err := s.List(ctx, c.f)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c.want, ids(got)); d != "" {
			t.Errorf("%s: List (-want +got):\n%s", c.name, d)
		}
	}
	all, _ := s.List(ctx, store.Filter{Limit: 1})
	if len(all) == 1 && (all[0].Commit != "cr4" || all[0].Branch != "main" || all[0].Host != "box" || all[0].Scenarios != 1 || all[0].Summary.Succeeded != 1) {
		t.Errorf("RunInfo = %+v, want commit cr4, branch main, host box, 1 scenario succeeded", all[0])
	}
	r, err := store.Latest(ctx, s, store.Filter{})
	if err != nil || r.ID != "r4" {
		t.Errorf("Latest = %v, %v; want r4", r, err)
	}
	r, err = store.Resolve(ctx, s, "latest")
	if err != nil || r.ID != "r4" {
		t.Errorf("Resolve(latest) = %v, %v; want r4", r, err)
	}
}

// testBaselines: a baseline names a stored run, setting it again moves it, and
// Resolve("baseline:NAME") finds its run.
func testBaselines(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	s := open(t, fresh(t))
	for _, id := range []string{"a", "b"} {
		if err := s.Put(ctx, MakeRun(id, T0, 1, 10, suiteBenchmarks, 1, 10)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetBaseline(ctx, store.Baseline{Name: "main", RunID: "missing"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetBaseline(missing run) = %v, want ErrNotFound", err)
	}
	if _, err := s.Baseline(ctx, "main"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Baseline(unset) = %v, want ErrNotFound", err)
	}
	at := T0.Add(time.Hour)
	must(t, s.SetBaseline(ctx, store.Baseline{Name: "main", RunID: "a", CreatedAt: at, Note: "first"}))
	must(t, s.SetBaseline(ctx, store.Baseline{Name: "release", RunID: "a", CreatedAt: at}))
	must(t, s.SetBaseline(ctx, store.Baseline{Name: "main", RunID: "b", CreatedAt: at}))
	got, err := s.ListBaselines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Baseline{{Name: "main", RunID: "b", CreatedAt: at}, {Name: "release", RunID: "a", CreatedAt: at}}
	if d := cmp.Diff(want, got, cmpopts.EquateApproxTime(time.Microsecond)); d != "" {
		t.Errorf("ListBaselines (-want +got):\n%s", d)
	}
	r, err := store.Resolve(ctx, s, "baseline:main")
	if err != nil || r.ID != "b" {
		t.Errorf("Resolve(baseline:main) = %v, %v; want run b", r, err)
	}
}

// testHistory: History returns a metric's points oldest first, by benchmark, scenario, window
// and statistic, each with its run's commit, parameters, dirtiness and way of measuring.
func testHistory(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	s := open(t, fresh(t))
	for i := 0; i < 6; i++ {
		must(t, s.Put(ctx, MakeRun(fmt.Sprintf("r%d", i), T0.Add(time.Duration(i)*time.Hour), uint64(i), 10+float64(i), suiteBenchmarks, 2, 20)))
	}
	pts, err := s.History(ctx, store.Query{Benchmark: "resnet", Scenario: "batch_size=2", Metric: "latency_ms.p95"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 6 {
		t.Fatalf("history has %d points, want 6", len(pts))
	}
	for i, p := range pts {
		r, _ := s.Get(ctx, p.RunID)
		want := r.Scenarios[1].Metrics["latency_ms"].Summary.P95
		if p.RunID != fmt.Sprintf("r%d", i) || p.Value != want || p.N != 20 || p.Commit != "c"+p.RunID || !p.Time.Equal(T0.Add(time.Duration(i)*time.Hour)) {
			t.Errorf("point %d = %+v, want run r%d, p95 %v, n 20, oldest first", i, p, i, want)
		}
		// A point carries its scenario's parameters: its identity without reading the run.
		if !reflect.DeepEqual(p.Params, r.Scenarios[1].Params) {
			t.Errorf("point %d params %v, want %v", i, p.Params, r.Scenarios[1].Params)
		}
	}
	cases := []struct {
		name string
		q    store.Query
		want int
	}{
		{"every benchmark and scenario", store.Query{Metric: "latency_ms"}, 24},
		{"one benchmark", store.Query{Metric: "latency_ms.median", Benchmark: "bert"}, 12},
		{"window", store.Query{Metric: "latency_ms", Since: T0.Add(2 * time.Hour), Until: T0.Add(4 * time.Hour)}, 8},
		{"value metric", store.Query{Metric: "throughput_ips", Benchmark: "bert", Scenario: "batch_size=1"}, 6},
		{"value metric has no p95", store.Query{Metric: "throughput_ips.p95"}, 0},
		{"limit keeps the newest", store.Query{Metric: "latency_ms", Benchmark: "bert", Scenario: "batch_size=1", Limit: 2}, 2},
		{"unknown metric", store.Query{Metric: "nothing_ms"}, 0},
	}
	for _, c := range cases {
		got, err := s.History(ctx, c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(got) != c.want {
			t.Errorf("%s: %d points, want %d", c.name, len(got), c.want)
		}
		if c.q.Limit > 0 && len(got) == 2 && got[1].RunID != "r5" {
			t.Errorf("%s: last point from %s, want r5", c.name, got[1].RunID)
		}
	}
	// A scenario without parameters: known and empty (not nil, which means unknown).
	bare := MakeRun("bare", T0.Add(7*time.Hour), 9, 10, []string{"bare"}, 1, 5)
	bare.Scenarios[0].Params = nil
	must(t, s.Put(ctx, bare))
	if got, err := s.History(ctx, store.Query{Metric: "latency_ms", Benchmark: "bare"}); err != nil || len(got) != 1 || got[0].Params == nil || len(got[0].Params) != 0 {
		t.Errorf("history of a scenario without parameters: %+v, %v; want one point with empty, non-nil params", got, err)
	}
	if _, err := s.History(ctx, store.Query{Metric: "latency_ms.p42"}); err == nil {
		t.Error("History(latency_ms.p42) succeeded, want an unknown-statistic error")
	}
	// A point says whether its run's tree was dirty and how its scenario was measured.
	counted := MakeRun("counted", T0.Add(8*time.Hour), 10, 10, []string{"bare"}, 1, 5)
	counted.Environment["git"].(map[string]any)["dirty"] = true
	counted.Scenarios[0].Counted = map[string]string{"valgrind": "3.19"}
	must(t, s.Put(ctx, counted))
	got, err := s.History(ctx, store.Query{Metric: "latency_ms", Benchmark: "bare"})
	if err != nil || len(got) != 2 || got[0].Dirty || got[0].Measure != "" || !got[1].Dirty || got[1].Measure != "instructions" {
		t.Errorf("history of a clean timed and a dirty counted run: %+v, %v; want dirty and measure on the second only", got, err)
	}
	// Benchmarks: every benchmark stored, whichever run holds it.
	if got, err := s.Benchmarks(ctx); err != nil || !reflect.DeepEqual(got, []string{"bare", "bert", "resnet"}) {
		t.Errorf("Benchmarks() = %v, %v; want [bare bert resnet]", got, err)
	}
}

// testReopenKeepsData: a store opened again (its migrations run again) keeps what it held.
func testReopenKeepsData(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	p := fresh(t)
	s := open(t, p)
	must(t, s.Put(ctx, MakeRun("r1", T0, 1, 10, suiteBenchmarks, 1, 10)))
	s2 := open(t, p) // migrations run again and find nothing to do
	if _, err := s2.Get(ctx, "r1"); err != nil {
		t.Errorf("reopened store lost run r1: %v", err)
	}
}

// testConcurrentWriters: two handles writing at once, as two processes would, lose no run and
// no history point.
func testConcurrentWriters(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	p := fresh(t)
	const writers, runsEach = 2, 15
	stores := make([]store.Store, writers)
	for i := range stores {
		stores[i] = open(t, p) // separate handles, as two processes would have
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers*runsEach)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < runsEach; i++ {
				id := fmt.Sprintf("w%d-%02d", w, i)
				if err := stores[w].Put(ctx, MakeRun(id, T0.Add(time.Duration(i)*time.Second), uint64(i), 10, suiteBenchmarks, 3, 50)); err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Put: %v", err)
	}
	infos, err := stores[0].List(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != writers*runsEach {
		t.Errorf("%d runs stored, want %d: a concurrent write was lost", len(infos), writers*runsEach)
	}
	pts, err := stores[1].History(ctx, store.Query{Metric: "latency_ms"})
	if err != nil {
		t.Fatal(err)
	}
	if want := writers * runsEach * len(suiteBenchmarks) * 3; len(pts) != want {
		t.Errorf("%d history points, want %d", len(pts), want)
	}
}

// must fails the test now on a non-nil err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
