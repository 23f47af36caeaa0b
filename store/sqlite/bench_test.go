package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/testkit/storetest"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
)

var (
	bigOnce sync.Once
	bigDir  string
	bigErr  error
)

// Shape of the history benchmark: 1,000 runs over 100 days × 200 scenarios (10 benchmarks of 20)
// × 5 metrics = 1,000,000 metric rows.
const (
	bigRuns       = 1000
	bigBenchmarks = 10
	bigScenarios  = 20
	bigMetrics    = 5
)

func bigStore(b *testing.B) store.Params {
	bigOnce.Do(func() {
		bigDir, bigErr = os.MkdirTemp("", "inferbench-bench-")
		if bigErr != nil {
			return
		}
		ctx := context.Background()
		st, err := store.Open(ctx, store.Params{URL: "sqlite:" + filepath.Join(bigDir, "history.db")})
		if err != nil {
			bigErr = err
			return
		}
		defer st.Close()
		for i := 0; i < bigRuns; i++ {
			at := storetest.T0.Add(time.Duration(i) * 100 * 24 * time.Hour / bigRuns)
			r := &result.Run{Schema: result.Schema, ID: fmt.Sprintf("run%04d", i), StartedAt: at}
			for bi := 0; bi < bigBenchmarks; bi++ {
				for si := 0; si < bigScenarios; si++ {
					ms := map[string]result.Metric{}
					for mi := 0; mi < bigMetrics; mi++ {
						m := result.NewMetric(fmt.Sprintf("metric%d_ms", mi))
						v := float64(10 + i%7 + mi)
						m.Value = &v
						ms[fmt.Sprintf("metric%d_ms", mi)] = m
					}
					r.Scenarios = append(r.Scenarios, result.Scenario{Benchmark: fmt.Sprintf("bench%d", bi), Scenario: fmt.Sprintf("s%d", si), Status: result.StatusOK, Metrics: ms})
				}
			}
			if bigErr = st.Put(ctx, r); bigErr != nil {
				return
			}
		}
	})
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return store.Params{URL: "sqlite:" + filepath.Join(bigDir, "history.db")}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bigDir != "" {
		os.RemoveAll(bigDir)
	}
	os.Exit(code)
}

// BenchmarkHistoryQuery queries 30 days of one metric out of 1,000,000 stored metric rows: of one
// scenario (300 points), and of every scenario of one benchmark (6,000 points).
func BenchmarkHistoryQuery(b *testing.B) {
	p := bigStore(b)
	ctx := context.Background()
	st, err := store.Open(ctx, p)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	since := storetest.T0.Add(60 * 24 * time.Hour)
	until := since.Add(30 * 24 * time.Hour)
	for _, c := range []struct {
		name string
		q    store.Query
		want int
	}{
		{"scenario", store.Query{Benchmark: "bench3", Scenario: "s7", Metric: "metric2_ms", Since: since, Until: until}, 300},
		{"benchmark", store.Query{Benchmark: "bench3", Metric: "metric2_ms", Since: since, Until: until}, 300 * bigScenarios},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				pts, err := st.History(ctx, c.q)
				if err != nil {
					b.Fatal(err)
				}
				if len(pts) != c.want {
					b.Fatalf("%d points, want %d", len(pts), c.want)
				}
			}
		})
	}
}
