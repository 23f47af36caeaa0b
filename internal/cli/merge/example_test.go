package merge_test

import (
	"fmt"

	"github.com/inferbench/inferbench/internal/cli/merge"
	"github.com/inferbench/inferbench/result"
)

// Two shards of a three-scenario suite, and a third that never reported: the merged run holds
// what was measured and names what is missing.
func ExampleRuns() {
	shardRun := func(i int, ids ...string) *result.Run {
		r := &result.Run{Schema: result.Schema, ID: fmt.Sprint("run-", i),
			Shard: &result.ShardInfo{Group: "nightly", Index: i, Count: 3, Planned: 3, Assigned: len(ids), Plan: "p1"}}
		for _, id := range ids {
			r.Scenarios = append(r.Scenarios, result.Scenario{Benchmark: "m", Scenario: id, Status: result.StatusOK})
		}
		r.Tally()
		return r
	}
	m, err := merge.Runs([]*result.Run{shardRun(0, "a"), shardRun(2, "b", "c")}, merge.Options{})
	if err != nil {
		panic(err)
	}
	failed, why := merge.Failed(m)
	fmt.Println(m.Summary.Total, "scenarios from", len(m.Merged.Parts), "shards")
	fmt.Println("fails the gate:", failed, "-", why)
	// Output:
	// 3 scenarios from 2 shards
	// fails the gate: true - shard 1/3: no run
}
