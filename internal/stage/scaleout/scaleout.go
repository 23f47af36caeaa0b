// Package scaleout is the bookkeeping of a run that is one part of a group on several machines
// (docs/scale-out.md): a shard's part of the selected scenarios (Shard, with the plan of
// shard.go: Parse, Select, Assign), and an agent's meeting with the other agents at the history store (Meet: its clock
// offset, the start barrier). Package run calls them from its select and write stages, and
// `inferbench merge` (internal/cli/merge) makes one run of the group.
package scaleout

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
	"github.com/inferbench/inferbench/suite"
)

// Shard returns the scenarios of shard spec of group among scenarios, and the shard's record. A
// shard may get none (more shards than scenarios). costs, when not nil, is the run whose scenario
// durations balance the shards, and costsFrom names it in the record.
func Shard(scenarios []*suite.Scenario, spec Spec, group string, costs *result.Run, costsFrom string) ([]*suite.Scenario, *result.ShardInfo, error) {
	cost := map[string]float64{}
	if costs != nil {
		for _, sc := range costs.Scenarios {
			if sc.Status != result.StatusSkipped {
				cost[sc.ID()] = sc.DurationS
			}
		}
	}
	items := make([]Item, len(scenarios))
	for i, sc := range scenarios {
		items[i] = Item{ID: sc.ID(), Cost: cost[sc.ID()]}
	}
	mine, plan, err := Select(items, spec)
	if err != nil {
		return nil, nil, err
	}
	out := make([]*suite.Scenario, len(mine))
	for i, k := range mine {
		out[i] = scenarios[k]
	}
	return out, &result.ShardInfo{
		Group: group, Index: spec.Index, Count: spec.Count, Planned: len(scenarios), Assigned: len(out),
		Balance: plan.Balance, CostsFrom: costsFrom, Plan: plan.Digest,
	}, nil
}

// ErrNoBarrier is Meet's error when the barrier was asked of a store that has none (SQLite).
var ErrNoBarrier = errors.New("the store has no start barrier")

// Meet measures the agent's clock offset against the clock of st (PostgreSQL has one) into
// a.ClockOffsetMS and, with barrier, waits at st's start barrier for the other agents of a's
// group (at most timeout; MeetAt's default when 0) and takes the start they agree on into
// a.StartAt. An offset that could not be measured, or only roughly, is a warning written to warn.
func Meet(ctx context.Context, st store.Store, a *result.AgentInfo, barrier bool, timeout time.Duration, warn io.Writer) error {
	var offset time.Duration
	if c, ok := st.(store.Clock); ok {
		off, unc, err := Offset(ctx, c)
		switch {
		case err == nil:
			offset = off
			ms := float64(off) / 1e6
			a.ClockOffsetMS = &ms
			if unc > 50*time.Millisecond {
				fmt.Fprintf(warn, "inferbench: clock offset %v measured with an uncertainty of ±%v (a slow link to the store)\n", off, unc)
			}
		case !errors.Is(err, errors.ErrUnsupported):
			fmt.Fprintf(warn, "inferbench: clock offset not measured: %v\n", err)
		}
	}
	if !barrier {
		return nil
	}
	b, ok := st.(store.Barrier)
	if !ok {
		return ErrNoBarrier
	}
	host, _ := os.Hostname()
	start, err := MeetAt(ctx, b, a.Group, a.Index, a.Count, host, MeetOptions{Offset: offset, Timeout: timeout})
	if err != nil {
		return err
	}
	a.StartAt = start
	return nil
}
