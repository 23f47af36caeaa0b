package web

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/testkit/storetest"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
)

// The trends page separates series by full scenario identity, as history does: six runs at
// dtype=float32 (10 ms) then six with --set dtype=float16 (5 ms), all of scenario "default", are
// two flat series, not one with a -50% change point. Failed before: one series of 12 points
// named "default", with a change point at the seventh.
func TestTrendsSeparateIdentities(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Params{URL: filepath.Join(t.TempDir(), "history.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for i := range 12 {
		dtype, ms := "float32", 10.0
		if i >= 6 {
			dtype, ms = "float16", 5.0
		}
		xs := make([]float64, 40)
		for j := range xs {
			xs[j] = ms * (1 + 0.01*float64(j%5))
		}
		at := storetest.T0.Add(time.Duration(i) * time.Hour)
		r := &result.Run{Schema: result.Schema, ID: fmt.Sprintf("run%02d", i+1), StartedAt: at, FinishedAt: at.Add(time.Minute),
			Scenarios: []result.Scenario{{Benchmark: "resnet", Scenario: "default", Subject: "fake", Status: result.StatusOK,
				Params: map[string]any{"dtype": dtype}, Iterations: result.Iterations{Measured: len(xs)},
				Metrics: map[string]result.Metric{"latency_ms": result.SampleMetric("latency_ms", xs)}}}}
		r.Tally()
		if err := st.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	trends, _, err := New(st).trends(ctx, map[string][]string{"benchmark": {"resnet"}, "metric": {"latency_ms.p50"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(trends) != 1 {
		t.Fatalf("%d trends, want 1", len(trends))
	}
	got := map[string]int{}
	for _, s := range trends[0].Series {
		got[s.Name] = len(s.Points)
		if len(s.Changes) != 0 {
			t.Errorf("series %s: change points %+v in a flat series", s.Name, s.Changes)
		}
	}
	want := map[string]int{"default [dtype=float16]": 6, "default [dtype=float32]": 6}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("series (name: points) %v, want %v", got, want)
	}
}

// The trends page offers every benchmark in the store (not only the latest run's), and keeps
// apart what is not one series (issue 42): six timed runs (5 ms), then two under valgrind
// (--measure instructions: about 1,900 ms of valgrind's time), then two of a dirty tree at the
// last clean commit. Before: the form offered the latest run's benchmarks only, and the ten
// points were one line, valgrind's time and the dirty runs under the clean commit in it.
func TestTrendsSeparateMeasuresAndDirtyRuns(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Params{URL: filepath.Join(t.TempDir(), "history.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	put := func(i int, bench string, ms float64, counted, dirty bool) {
		xs := make([]float64, 20)
		for j := range xs {
			xs[j] = ms * (1 + 0.01*float64(j%5))
		}
		at := storetest.T0.Add(time.Duration(i) * time.Hour)
		sc := result.Scenario{Benchmark: bench, Scenario: "default", Subject: "fake", Status: result.StatusOK, Params: map[string]any{},
			Iterations: result.Iterations{Measured: len(xs)}, Metrics: map[string]result.Metric{"latency_ms": result.SampleMetric("latency_ms", xs)}}
		if counted {
			sc.Counted = map[string]string{"valgrind": "valgrind-3.19.0"}
		}
		r := &result.Run{Schema: result.Schema, ID: fmt.Sprintf("run%02d", i+1), StartedAt: at, FinishedAt: at.Add(time.Minute),
			Environment: map[string]any{"git": map[string]any{"commit": "abc", "dirty": dirty}}, Scenarios: []result.Scenario{sc}}
		r.Tally()
		if err := st.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 6 {
		put(i, "textstats", 5, false, false)
	}
	put(6, "textstats", 1900, true, false)
	put(7, "textstats", 1910, true, false)
	put(8, "textstats", 7, false, true)
	put(9, "textstats", 7, false, true)
	put(10, "other", 1, false, false) // the latest run holds another benchmark only
	trends, v, err := New(st).trends(ctx, map[string][]string{"benchmark": {"textstats"}, "metric": {"latency_ms.p50"}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(v.Benchmarks) != "[other textstats]" {
		t.Errorf("the form offers %v, want every benchmark stored", v.Benchmarks)
	}
	if len(trends) != 1 {
		t.Fatalf("%d trends, want 1", len(trends))
	}
	got := map[string]int{}
	for _, s := range trends[0].Series {
		got[s.Name] = len(s.Points)
		if len(s.Changes) != 0 {
			t.Errorf("series %s: change points %+v in a flat series", s.Name, s.Changes)
		}
	}
	want := map[string]int{"default": 6, "default [measure=instructions]": 2, "default (uncommitted changes)": 2}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("series (name: points) %v, want %v", got, want)
	}
}
