package history

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/store"
)

// memRuns is an in-memory store.Runs and store.Historian over runs of one scenario. With params,
// its points carry their scenario's parameters, as the SQL stores' do; gets counts Get calls.
type memRuns struct {
	runs   []*result.Run
	params bool
	gets   int
}

func (m *memRuns) Put(context.Context, *result.Run) error { return nil }
func (m *memRuns) Get(_ context.Context, id string) (*result.Run, error) {
	m.gets++
	for _, r := range m.runs {
		if r.ID == id {
			return r, nil
		}
	}
	return nil, fmt.Errorf("run %s: %w", id, store.ErrNotFound)
}
func (m *memRuns) List(context.Context, store.Filter) ([]store.RunInfo, error) { return nil, nil }
func (m *memRuns) History(_ context.Context, q store.Query) ([]store.Point, error) {
	var out []store.Point
	for _, r := range m.runs {
		for _, s := range r.Scenarios {
			v, _ := s.Metrics["latency_ms"].Center()
			p := store.Point{RunID: r.ID, Time: r.StartedAt, Benchmark: s.Benchmark, Scenario: s.Scenario, Value: v}
			if m.params {
				p.Params = s.Params
			}
			out = append(out, p)
		}
	}
	return out, nil
}

func runOf(i int, dtype string, v float64) *result.Run {
	m := result.NewMetric("latency_ms")
	m.Value = &v
	return &result.Run{ID: fmt.Sprintf("r%02d", i), StartedAt: time.Unix(int64(i)*3600, 0), Scenarios: []result.Scenario{{
		Benchmark: "resnet", Scenario: "batch_size=1", Params: map[string]any{"batch_size": 1, "dtype": dtype},
		Status: result.StatusOK, Metrics: map[string]result.Metric{"latency_ms": m},
	}}}
}

// Runs of one scenario name with different parameters (--set dtype=...) are separate series, and
// neither shows the difference between them as a change point. Failed before: one series of
// alternating float32/float16 values.
//
// Points that carry their parameters (the SQL stores') are grouped without reading a single run;
// points of runs stored before parameters were kept are grouped by reading each run once.
func TestSeriesByFullIdentity(t *testing.T) {
	for _, params := range []bool{false, true} {
		st := &memRuns{params: params}
		for i := 0; i < 12; i++ {
			dtype, v := "float32", 10.0
			if i%2 == 1 {
				dtype, v = "float16", 6.0
			}
			st.runs = append(st.runs, runOf(i, dtype, v*(1+0.001*float64(i%3))))
		}
		ss, err := Query(context.Background(), st, store.Query{Metric: "latency_ms"}, stats.ChangeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ss) != 2 || len(ss[0].Points) != 6 || ss[0].Distinct != "dtype=float32" || ss[1].Name() != "resnet/batch_size=1 [dtype=float16]" {
			t.Fatalf("params in points %v: series: %+v", params, ss)
		}
		for _, s := range ss {
			if len(s.ChangePoints) != 0 {
				t.Errorf("%s: change points %+v, want none", s.Name(), s.ChangePoints)
			}
		}
		if want := map[bool]int{false: 12, true: 0}[params]; st.gets != want {
			t.Errorf("params in points %v: %d runs read, want %d", params, st.gets, want)
		}
	}
}

// A 6.00 → 5.00 ms step over ten runs whose points vary by 5% (CV) is found at the defaults, in
// each of eight seeded series. Failed before: the t-test at p < 0.001 found it in four of them.
func TestStepInTenRuns(t *testing.T) {
	found := 0
	for base := uint64(0); base < 8; base++ {
		pts := make([]store.Point, 10)
		for i := range pts {
			c := 6.0
			if i >= 5 {
				c = 5
			}
			rng := rand.New(rand.NewPCG(base*100+uint64(i), 7))
			pts[i] = store.Point{RunID: fmt.Sprintf("r%d", i), Benchmark: "b", Scenario: "s", Value: c * (1 + 0.05*rng.NormFloat64())}
		}
		ss := Build(pts, "latency_ms", nil, stats.ChangeOptions{})
		if cps := ss[0].ChangePoints; len(cps) == 1 && cps[0].Index >= 3 && cps[0].Index <= 7 && cps[0].Magnitude < -0.1 {
			found++
		} else {
			t.Logf("series %d: change points %+v", base, ss[0].ChangePoints)
		}
	}
	if found != 8 {
		t.Errorf("step found (within two runs of r5) in %d of 8 series, want 8", found)
	}
}

// TestBuildByName groups points by scenario and finds the shift in the one that has one.
func TestBuildByName(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var pts []store.Point
	for i := range 20 {
		v := 10.0
		if i >= 10 {
			v = 13
		}
		at := t0.Add(time.Duration(i) * time.Hour)
		pts = append(pts,
			store.Point{Benchmark: "b", Scenario: "shifts", RunID: "r" + string(rune('a'+i)), Time: at, Value: v + 0.01*float64(i%3)},
			store.Point{Benchmark: "b", Scenario: "flat", RunID: "r" + string(rune('a'+i)), Time: at, Value: 5 + 0.01*float64(i%3)})
	}
	series := Build(pts, "latency_ms.p50", nil, stats.ChangeOptions{MaxP: 0.001})
	if len(series) != 2 || series[0].Scenario != "shifts" || len(series[0].Points) != 20 {
		t.Fatalf("series %+v", series)
	}
	if cps := series[0].ChangePoints; len(cps) != 1 || cps[0].Index != 10 || cps[0].RunID != "rk" || cps[0].Magnitude < 0.25 {
		t.Errorf("change points of the shifting series: %+v", cps)
	}
	if cps := series[1].ChangePoints; len(cps) != 0 {
		t.Errorf("change points of the flat series: %+v", cps)
	}
	var buf bytes.Buffer
	WriteText(&buf, series[0], Options{})
	if out := buf.String(); !strings.Contains(out, "10 earlier points") || !strings.Contains(out, "change point at run rk") {
		t.Errorf("text:\n%s", out)
	}
}
