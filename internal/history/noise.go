package history

import (
	"context"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
)

// NoiseRuns bounds the stored runs a noise-aware threshold looks at: the newest ones.
const NoiseRuns = 50

// NoiseHistory answers compare.Config.History from st for a comparison whose new run is under
// test: the centers of a metric of a scenario in the stored runs that started before it (it
// excluded), oldest first, the newest NoiseRuns of them; a point is the scenario's when its
// parameters match (compare.Key), or by name where the store does not know them. A query that
// fails gives nothing: the threshold stays the default.
func NoiseHistory(ctx context.Context, st store.Historian, under *result.Run) compare.History {
	return func(s *result.Scenario, metric string) []float64 {
		pts, err := st.History(ctx, store.Query{Benchmark: s.Benchmark, Scenario: s.Scenario, Metric: metric, Until: under.StartedAt, Limit: NoiseRuns + 1})
		if err != nil {
			return nil
		}
		key := compare.Key(s)
		var xs []float64
		for _, p := range pts {
			if p.RunID == under.ID {
				continue
			}
			if p.Params != nil && compare.Key(&result.Scenario{Benchmark: p.Benchmark, Scenario: p.Scenario, Params: p.Params}) != key {
				continue
			}
			xs = append(xs, p.Value)
		}
		if len(xs) > NoiseRuns {
			xs = xs[len(xs)-NoiseRuns:]
		}
		return xs
	}
}

// Values returns the values of the points st.History(q) finds, oldest first.
func Values(ctx context.Context, st store.Historian, q store.Query) ([]float64, error) {
	pts, err := st.History(ctx, q)
	if err != nil {
		return nil, err
	}
	xs := make([]float64, len(pts))
	for i, p := range pts {
		xs[i] = p.Value
	}
	return xs, nil
}
