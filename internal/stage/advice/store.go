package advice

import (
	"context"

	"github.com/inferbench/inferbench/internal/history"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
)

// adviceLimit bounds the stored values per scenario and metric the advice rules look at.
const adviceLimit = 200

// FromStore answers the rules from st with a query per benchmark and metric (see PerBenchmark),
// the points grouped by full scenario identity as history groups them
// (history.FromRuns reads each run once, from runs); a scenario with no name (which a query
// would not tell from "every scenario") is asked for alone.
func FromStore(ctx context.Context, st store.Historian, runs store.Runs) History {
	id := history.ByName
	if runs != nil {
		id, _ = history.FromRuns(ctx, runs)
	}
	perBenchmark := PerBenchmark(func(bench, metric string) map[string][]float64 {
		pts, _ := st.History(ctx, store.Query{Benchmark: bench, Metric: metric})
		by := map[string][]float64{}
		for _, p := range pts {
			k, _ := id(p)
			by[k] = append(by[k], p.Value)
		}
		return by
	}, adviceLimit)
	return func(s *result.Scenario, metric string) []float64 {
		if s.Benchmark == "" || s.Scenario == "" {
			xs, _ := history.Values(ctx, st, store.Query{Benchmark: s.Benchmark, Scenario: s.Scenario, Metric: metric, Limit: adviceLimit})
			return xs
		}
		return perBenchmark(s, metric)
	}
}
