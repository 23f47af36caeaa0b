// Package merge makes one run out of the runs of a scale-out group: the shards of a suite
// (inferbench run --shard i/n), whose scenarios are disjoint and are gathered, or the agents that
// loaded one server together (inferbench run --agents N --agent i), whose scenarios are the same
// and are combined: histogram buckets added, counts summed, rates taken over the union of the
// measured windows, with the skew of each agent beside them.
//
// The merged run is an ordinary result.Run (compare, reports and budgets work on it) with a
// MergeInfo naming every part, its environment, and the parts that are missing or did not finish.
// Such a run fails the gate (Failed) unless the caller allowed missing parts. Group is
// `inferbench merge`: the parts read from folders or the store, merged, then written, recorded,
// judged and rendered as run.Run does.
package merge

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/inferbench/inferbench/result"
)

// Options configure a merge.
type Options struct {
	// ID is the merged run's ID (default "merged-" + group).
	ID string
	// AllowMissing lets missing or interrupted parts pass the gate; they are still named.
	AllowMissing bool
	// KeepSamples bounds the raw samples kept per metric when agents' samples are pooled
	// (default 10,000; negative keeps all).
	KeepSamples int
}

// Kinds of merge.
const (
	KindShards = "shards"
	KindAgents = "agents"
)

// Runs merges the runs of one group. Every run must be a shard (with result.ShardInfo) or every
// run an agent (result.AgentInfo), all of one group and count; shards must share one plan. When
// a part index has several runs (a retried pod), the complete one that started last is used and
// the others are listed as superseded.
func Runs(runs []*result.Run, opt Options) (*result.Run, error) {
	if len(runs) == 0 {
		return nil, errors.New("merge: no runs")
	}
	kind, group, count, err := classify(runs)
	if err != nil {
		return nil, err
	}
	chosen := map[int]*result.Run{}
	var superseded []string
	for _, r := range runs {
		i := index(r)
		if i < 0 || i >= count {
			return nil, fmt.Errorf("merge: run %s: index %d outside 0..%d", r.ID, i, count-1)
		}
		prev, ok := chosen[i]
		if !ok {
			chosen[i] = r
			continue
		}
		keep, drop := prev, r
		if better(r, prev) {
			keep, drop = r, prev
		}
		chosen[i] = keep
		superseded = append(superseded, drop.ID)
	}
	slices.Sort(superseded)
	info := &result.MergeInfo{Group: group, Kind: kind, Count: count, AllowMissing: opt.AllowMissing, Superseded: superseded}
	label := strings.TrimSuffix(kind, "s")
	var parts []*result.Run
	for i := range count {
		r, ok := chosen[i]
		if !ok {
			info.Missing = append(info.Missing, fmt.Sprintf("%s %d/%d: no run", label, i, count))
			continue
		}
		parts = append(parts, r)
		p := result.Part{
			Index: i, RunID: r.ID, Status: "ok", StartedAt: r.StartedAt, Scenarios: len(r.Scenarios),
			Failed: r.Summary.Failed, Environment: r.Environment, Agent: r.Agent, Args: r.Config.Args,
		}
		p.Host, _ = r.Environment["hostname"].(string)
		switch {
		case r.Partial:
			p.Status = "partial"
			info.Missing = append(info.Missing, fmt.Sprintf("%s %d/%d: run %s did not finish (partial)", label, i, count, r.ID))
		case r.Summary.Failed > 0:
			p.Status = "failed"
		}
		if r.Shard != nil && r.Shard.Assigned != len(r.Scenarios) && !r.Partial {
			info.Missing = append(info.Missing, fmt.Sprintf("%s %d/%d: run %s holds %d of its %d scenarios", label, i, count, r.ID, len(r.Scenarios), r.Shard.Assigned))
		}
		info.Parts = append(info.Parts, p)
	}
	// The parts' command lines differ (--shard i/n, --agent i) and are each in their Part; the
	// merged run's Config says it is a merge (Group puts the merge's own command line there)
	// and keeps the selection, which the parts share.
	out := &result.Run{
		Schema: result.Schema, ID: opt.ID, Merged: info, Scenarios: []result.Scenario{},
		Environment: parts[0].Environment,
		Config:      result.Config{Args: []string{"merge", "--group", group}, Filters: parts[0].Config.Filters, Set: parts[0].Config.Set},
	}
	if out.ID == "" {
		out.ID = "merged-" + group
	}
	for _, r := range parts {
		if out.StartedAt.IsZero() || r.StartedAt.Before(out.StartedAt) {
			out.StartedAt = r.StartedAt
		}
		if r.FinishedAt.After(out.FinishedAt) {
			out.FinishedAt = r.FinishedAt
		}
	}
	// Note: the merged run is never partial itself: the merge was not interrupted, and a part
	// that was is named in Missing, which fails the gate unless allowed. (A partial merged run
	// failed as "interrupted" even with AllowMissing.)
	switch kind {
	case KindShards:
		err = gatherShards(out, parts)
		if planned := parts[0].Shard.Planned; err == nil && len(info.Missing) == 0 && len(out.Scenarios) != planned {
			info.Missing = append(info.Missing, fmt.Sprintf("the shards hold %d scenarios, their plan %d", len(out.Scenarios), planned))
		}
	case KindAgents:
		err = combineAgents(out, parts, opt.KeepSamples)
	}
	if err != nil {
		return nil, err
	}
	out.Tally()
	return out, nil
}

// Failed reports whether a merged run must fail the gate for missing or unfinished parts, and
// why.
func Failed(r *result.Run) (bool, string) {
	if r.Merged == nil || len(r.Merged.Missing) == 0 || r.Merged.AllowMissing {
		return false, ""
	}
	return true, strings.Join(r.Merged.Missing, "; ")
}

func index(r *result.Run) int {
	if r.Shard != nil {
		return r.Shard.Index
	}
	return r.Agent.Index
}

// better prefers a finished run to a partial one, then the one that started last.
func better(a, b *result.Run) bool {
	if a.Partial != b.Partial {
		return !a.Partial
	}
	return a.StartedAt.After(b.StartedAt)
}

// classify checks that the runs are parts of one group and returns its kind, ID and count.
func classify(runs []*result.Run) (kind, group string, count int, err error) {
	for _, r := range runs {
		var k, g string
		var n int
		switch {
		case r.Shard != nil && r.Agent != nil:
			return "", "", 0, fmt.Errorf("merge: run %s is both a shard and an agent: merge its shards' agents first", r.ID)
		case r.Shard != nil:
			k, g, n = KindShards, r.Shard.Group, r.Shard.Count
		case r.Agent != nil:
			k, g, n = KindAgents, r.Agent.Group, r.Agent.Count
		default:
			return "", "", 0, fmt.Errorf("merge: run %s is neither a shard nor an agent (run it with --shard or --agents)", r.ID)
		}
		if kind == "" {
			kind, group, count = k, g, n
		}
		switch {
		case k != kind:
			return "", "", 0, fmt.Errorf("merge: run %s is one of %s but run %s one of %s: merge one kind at a time", r.ID, k, runs[0].ID, kind)
		case g != group:
			return "", "", 0, fmt.Errorf("merge: run %s is of group %q but run %s of group %q", r.ID, g, runs[0].ID, group)
		case n != count:
			return "", "", 0, fmt.Errorf("merge: run %s is one of %d %s but run %s one of %d", r.ID, n, k, runs[0].ID, count)
		}
	}
	if kind == KindShards {
		plans := map[string][]string{}
		for _, r := range runs {
			plans[r.Shard.Plan] = append(plans[r.Shard.Plan], fmt.Sprintf("%s (shard %d)", r.ID, r.Shard.Index))
		}
		if len(plans) > 1 {
			var b strings.Builder
			for _, p := range slices.Sorted(maps.Keys(plans)) {
				fmt.Fprintf(&b, "\n  plan %s: %s", p, strings.Join(plans[p], ", "))
			}
			return "", "", 0, fmt.Errorf("merge: the shards of group %q planned different assignments (their selection, --shard-costs or version differ), so scenarios may be missing or repeated:%s", group, b.String())
		}
	}
	return kind, group, count, nil
}

// gatherShards appends every shard's scenarios in shard order; a scenario in two shards is an
// error (the plans said otherwise).
func gatherShards(out *result.Run, parts []*result.Run) error {
	n := 0
	for _, r := range parts {
		n += len(r.Scenarios)
	}
	// One allocation: appending 64,000 scenarios (about 500 bytes each) to a growing slice
	// copied them 17 times, 120 MB a merge.
	out.Scenarios = slices.Grow(out.Scenarios, n)
	seen := make(map[string]string, n)
	for _, r := range parts {
		for _, sc := range r.Scenarios {
			id := sc.ID()
			if prev, ok := seen[id]; ok {
				return fmt.Errorf("merge: scenario %s is in run %s and run %s", id, prev, r.ID)
			}
			seen[id] = r.ID
			out.Scenarios = append(out.Scenarios, sc)
		}
	}
	return nil
}

// combineAgents merges each scenario across the agents that ran it, in the first agent's order.
func combineAgents(out *result.Run, parts []*result.Run, keep int) error {
	byID := map[string][]agentScenario{}
	var order []string
	for _, r := range parts {
		seen := map[string]bool{}
		for k := range r.Scenarios {
			sc := &r.Scenarios[k]
			id := sc.ID()
			if seen[id] {
				return fmt.Errorf("merge: run %s has scenario %s twice", r.ID, id)
			}
			seen[id] = true
			if _, ok := byID[id]; !ok {
				order = append(order, id)
			}
			byID[id] = append(byID[id], agentScenario{run: r, sc: sc})
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(firstIndex(parts, a), firstIndex(parts, b)) })
	for _, id := range order {
		sc, err := combine(byID[id], len(parts), keep)
		if err != nil {
			return fmt.Errorf("merge: scenario %s: %w", id, err)
		}
		out.Scenarios = append(out.Scenarios, sc)
	}
	return nil
}

func firstIndex(parts []*result.Run, id string) int {
	for _, r := range parts {
		for k := range r.Scenarios {
			if r.Scenarios[k].ID() == id {
				return k
			}
		}
	}
	return 0
}

// unixMS is a wall-clock time in milliseconds, for skew figures.
func unixMS(t time.Time) float64 { return float64(t.UnixNano()) / 1e6 }
