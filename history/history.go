// Package history turns the stored points of one metric into series, one per scenario identity
// (benchmark and every parameter, --set overrides included, as compare matches scenarios), and
// finds each series' change points (stats.ChangePoints).
package history

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/store"
)

// Series is one scenario's history of one metric with its change points.
type Series struct {
	Benchmark string `json:"benchmark"`
	Scenario  string `json:"scenario"`
	// Params are the scenario's parameters, when the runs could be read; Distinct names those
	// that tell this series apart from another of the same scenario name ("dtype=float16").
	Params       map[string]any `json:"params,omitempty"`
	Distinct     string         `json:"distinct,omitempty"`
	Metric       string         `json:"metric"`
	Points       []store.Point  `json:"points"`
	ChangePoints []ChangePoint  `json:"change_points"`
}

// Name is "benchmark/scenario", followed by what tells the series apart when another has the
// same scenario name: "resnet/batch_size=8 [dtype=float16]".
func (s *Series) Name() string {
	n := s.Benchmark + "/" + s.Scenario
	if s.Distinct != "" {
		n += " [" + s.Distinct + "]"
	}
	return n
}

// ChangePoint is a change point of a series, with the run it starts at.
type ChangePoint struct {
	stats.ChangePoint
	RunID  string    `json:"run_id"`
	Time   time.Time `json:"time"`
	Commit string    `json:"commit,omitempty"`
}

// Identity returns a point's scenario identity (a key, and the parameters when known).
type Identity func(p store.Point) (key string, params map[string]any)

// ByName is the identity of stores that cannot say more: benchmark and scenario name.
func ByName(p store.Point) (string, map[string]any) {
	return p.Benchmark + "\x00" + p.Scenario, nil
}

// FromRuns returns the identity that reads each point's run from runs (once per run) and keys
// the point by its scenario's benchmark and parameters (compare.Key), so runs of one scenario
// name with different parameters (--set dtype=float16) make separate series. A run that cannot
// be read falls back on the name, and the error is returned by Err.
func FromRuns(ctx context.Context, runs store.Runs) (Identity, func() error) {
	type entry struct {
		key    string
		params map[string]any
	}
	byRun := map[string]map[string]entry{} // run → benchmark/scenario → identity
	var firstErr error
	id := func(p store.Point) (string, map[string]any) {
		scs, ok := byRun[p.RunID]
		if !ok {
			scs = map[string]entry{}
			r, err := runs.Get(ctx, p.RunID)
			if err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("history: run %s: %w (its points are grouped by scenario name)", p.RunID, err)
				}
			} else {
				for i := range r.Scenarios {
					s := &r.Scenarios[i]
					scs[s.ID()] = entry{compare.Key(s), s.Params}
				}
			}
			byRun[p.RunID] = scs
		}
		if e, ok := scs[p.Benchmark+"/"+p.Scenario]; ok {
			return e.key, e.params
		}
		return ByName(p)
	}
	return id, func() error { return firstErr }
}

// Build groups points (oldest first) into series by identity, in order of first appearance, and
// finds each series' change points with o.
func Build(pts []store.Point, metric string, id Identity, o stats.ChangeOptions) []Series {
	if id == nil {
		id = ByName
	}
	var out []Series
	idx := map[string]int{}
	for _, p := range pts {
		k, params := id(p)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Series{Benchmark: p.Benchmark, Scenario: p.Scenario, Params: params, Metric: metric})
		}
		out[i].Points = append(out[i].Points, p)
	}
	distinguish(out)
	for i := range out {
		s := &out[i]
		xs := make([]float64, len(s.Points))
		for j, p := range s.Points {
			xs[j] = p.Value
		}
		s.ChangePoints = []ChangePoint{}
		for _, cp := range stats.ChangePoints(xs, o) {
			p := s.Points[cp.Index]
			s.ChangePoints = append(s.ChangePoints, ChangePoint{ChangePoint: cp, RunID: p.RunID, Time: p.Time, Commit: p.Commit})
		}
	}
	return out
}

// distinguish sets Distinct on series that share a benchmark and scenario name: the parameters
// whose values differ among them.
func distinguish(ss []Series) {
	groups := map[string][]int{}
	for i := range ss {
		k := ss[i].Benchmark + "/" + ss[i].Scenario
		groups[k] = append(groups[k], i)
	}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		differ := map[string]bool{}
		for _, i := range g {
			for _, j := range g {
				for k := range ss[i].Params {
					if fmt.Sprint(ss[i].Params[k]) != fmt.Sprint(ss[j].Params[k]) {
						differ[k] = true
					}
				}
				for k := range ss[j].Params {
					if _, ok := ss[i].Params[k]; !ok {
						differ[k] = true
					}
				}
			}
		}
		keys := slices.Sorted(maps.Keys(differ))
		for _, i := range g {
			var parts []string
			for _, k := range keys {
				v, ok := ss[i].Params[k]
				if !ok {
					v = "-"
				}
				parts = append(parts, fmt.Sprintf("%s=%v", k, v))
			}
			ss[i].Distinct = strings.Join(parts, ",")
		}
	}
}

// Query reads the points q asks for from st and builds their series by full identity.
func Query(ctx context.Context, st interface {
	store.Historian
	store.Runs
}, q store.Query, o stats.ChangeOptions) ([]Series, error) {
	pts, err := st.History(ctx, q)
	if err != nil {
		return nil, err
	}
	id, errf := FromRuns(ctx, st)
	ss := Build(pts, q.Metric, id, o)
	return ss, errf()
}
