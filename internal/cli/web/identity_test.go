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
