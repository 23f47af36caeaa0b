package advice

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/inferbench/inferbench/internal/history"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"

	_ "github.com/inferbench/inferbench/store/sqlite" // store.Open's default
)

// countingHistorian counts the queries the advice rules make.
type countingHistorian struct {
	store.Historian
	n int
}

func (c *countingHistorian) History(ctx context.Context, q store.Query) ([]store.Point, error) {
	c.n++
	return c.Historian.History(ctx, q)
}

// TestAdviceHistory checks that the advice rules get from FromStore, in one store query per
// benchmark and metric, what a query per scenario and metric returned: the same values (the last
// adviceLimit of them) and so the same tips.
func TestAdviceHistory(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Params{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	const runs = adviceLimit + 12 // the oldest values fall outside the limit
	var last *result.Run
	for i := range runs {
		r := &result.Run{Schema: result.Schema, ID: fmt.Sprintf("run-%03d", i), StartedAt: t0.Add(time.Duration(i) * time.Hour), FinishedAt: t0.Add(time.Duration(i)*time.Hour + time.Minute)}
		for b := range 2 {
			for s := range 3 {
				mem := 100.0 + float64(s)
				switch {
				case b == 0 && s == 1 && i >= runs-5: // a shift in the last runs: a tip
					mem *= 1.5
				case b == 1 && s == 2 && i < 6: // a shift only among values beyond the limit
					mem *= 3
				}
				gpu := 1000.0
				if b == 1 && s == 0 && i >= runs-4 {
					gpu = 1400
				}
				m := map[string]result.Metric{"memory_mb": {Unit: "MB", Better: "lower", Value: &mem}}
				if i%2 == 0 || b == 1 { // sparse for benchmark 0: scenarios differ in their counts
					m["gpu_memory_mb"] = result.Metric{Unit: "MB", Better: "lower", Value: &gpu}
				}
				r.Scenarios = append(r.Scenarios, result.Scenario{Benchmark: fmt.Sprint("bench-", b), Scenario: fmt.Sprint("s=", s), Subject: "fake", Status: result.StatusOK, Metrics: m})
			}
		}
		r.Tally()
		if err := st.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
		last = r
	}
	perScenario := func(sc *result.Scenario, metric string) []float64 {
		xs, _ := history.Values(ctx, st, store.Query{Benchmark: sc.Benchmark, Scenario: sc.Scenario, Metric: metric, Limit: adviceLimit})
		return xs
	}
	counter := &countingHistorian{Historian: st}
	batched := FromStore(ctx, counter, st)
	for _, sc := range last.Scenarios {
		for _, m := range []string{"memory_mb", "gpu_memory_mb", "peak_rss_mb"} {
			want := perScenario(&sc, m)
			if diff := cmp.Diff(want, batched(&sc, m), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s %s: history differs (-per scenario +per benchmark):\n%s", sc.ID(), m, diff)
			}
		}
	}
	if want := 2 * 3; counter.n != want { // benchmarks × metrics, not scenarios × metrics (18)
		t.Errorf("%d store queries, want %d", counter.n, want)
	}
	want := For(last, Rules{}, perScenario)
	got := For(last, Rules{}, FromStore(ctx, st, st))
	if len(want) != 2 {
		t.Errorf("%d tips with a query per scenario, want 2 (the fixture is wrong): %v", len(want), want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tips differ (-per scenario +per benchmark):\n%s", diff)
	}
}

// The memory-growth advice reads the history of the scenario's full identity, as history does:
// six runs at dtype=float32 (100 MB) then six with --set dtype=float16 (150 MB), all of scenario
// "default", are not one series that "shifted up +50%". Failed before: the tip "memory_mb shifted
// up +50% (100 → 150) 6 runs ago" on the float16 run, whose own history is flat.
func TestAdviceHistoryByIdentity(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Params{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var last *result.Run
	for i := range 12 {
		dtype, mem := "float32", 100.0
		if i >= 6 {
			dtype, mem = "float16", 150.0
		}
		r := &result.Run{Schema: result.Schema, ID: fmt.Sprintf("run-%03d", i), StartedAt: t0.Add(time.Duration(i) * time.Hour), FinishedAt: t0.Add(time.Duration(i)*time.Hour + time.Minute),
			Scenarios: []result.Scenario{{Benchmark: "resnet", Scenario: "default", Subject: "fake", Status: result.StatusOK, Params: map[string]any{"dtype": dtype},
				Metrics: map[string]result.Metric{"memory_mb": {Unit: "MB", Better: "lower", Value: &mem}}}}}
		r.Tally()
		if err := st.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
		last = r
	}
	hist := FromStore(ctx, st, st)
	if xs := hist(&last.Scenarios[0], "memory_mb"); cmp.Diff([]float64{150, 150, 150, 150, 150, 150}, xs) != "" {
		t.Errorf("history of resnet/default [dtype=float16]: %v, want its own six runs at 150", xs)
	}
	for _, tip := range For(last, Rules{}, hist) {
		if tip.Rule == "memory-growth" {
			t.Errorf("memory-growth tip from another identity's runs: %s", tip.Text)
		}
	}
}
