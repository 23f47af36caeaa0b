package recorded

import (
	"fmt"
	"maps"
	"slices"

	"github.com/inferbench/inferbench/result"
)

// gitHubBenchmark is one entry of github-action-benchmark's custom JSON format.
type gitHubBenchmark struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
	Range string  `json:"range,omitempty"`
	Extra string  `json:"extra,omitempty"`
}

// gitHubActionBenchmark returns a run's metrics in github-action-benchmark's custom format, for
// its "customSmallerIsBetter" (better = result.Lower) or "customBiggerIsBetter" (Higher) tool: one entry
// per scenario and metric of that direction, valued at the median.
func gitHubActionBenchmark(r *result.Run, better result.Direction) []gitHubBenchmark {
	out := []gitHubBenchmark{}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if s.Status != result.StatusOK {
			continue
		}
		names := slices.Sorted(maps.Keys(s.Metrics))
		for _, k := range names {
			m := s.Metrics[k]
			dir := result.Direction(m.Better)
			if dir == "" {
				info, _ := result.Lookup(k)
				dir = info.Better
			}
			if dir != better {
				continue
			}
			v, ok := m.Center()
			if !ok {
				continue
			}
			e := gitHubBenchmark{Name: s.ID() + " " + k, Unit: m.Unit, Value: v}
			if m.Summary != nil {
				if ci := m.Summary.MedianCI; ci != nil {
					e.Range = fmt.Sprintf("± %.4g", (ci.Hi-ci.Lo)/2)
				}
				e.Extra = fmt.Sprintf("n=%d p95=%.4g p99=%.4g", m.Summary.N, m.Summary.P95, m.Summary.P99)
			}
			out = append(out, e)
		}
	}
	return out
}
