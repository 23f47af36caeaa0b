package scaleout

import (
	"slices"
	"testing"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// TestShardsCoverEveryScenarioOnce: the shards of a group take every scenario exactly once, each
// shard's record says what it was given, and a reference run's durations make the plan balance by
// cost (its skipped scenarios count for nothing).
func TestShardsCoverEveryScenarioOnce(t *testing.T) {
	b := &suite.Benchmark{Name: "b"}
	var scs []*suite.Scenario
	for _, n := range []string{"s0", "s1", "s2", "s3", "s4"} {
		scs = append(scs, &suite.Scenario{Benchmark: b, Name: n})
	}
	ref := &result.Run{Scenarios: []result.Scenario{
		{Benchmark: "b", Scenario: "s0", Status: result.StatusOK, DurationS: 9},
		{Benchmark: "b", Scenario: "s1", Status: result.StatusSkipped, DurationS: 100},
	}}
	for _, tc := range []struct {
		name    string
		costs   *result.Run
		balance string
	}{
		{"by count", nil, "count"}, // no reference run: the shards get as many scenarios each
		{"by cost", ref, "cost"},   // the durations of a reference run
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for i := range 2 {
				mine, info, err := Shard(scs, Spec{Index: i, Count: 2}, "g", tc.costs, "ref")
				if err != nil {
					t.Fatal(err)
				}
				if info.Group != "g" || info.Index != i || info.Count != 2 || info.Planned != 5 || info.Assigned != len(mine) || info.Balance != tc.balance || info.Plan == "" {
					t.Errorf("shard %d recorded %+v", i, info)
				}
				for _, sc := range mine {
					got = append(got, sc.ID())
				}
			}
			slices.Sort(got)
			if want := []string{"b/s0", "b/s1", "b/s2", "b/s3", "b/s4"}; !slices.Equal(got, want) {
				t.Errorf("the shards took %v, want each of %v once", got, want)
			}
		})
	}
	if _, _, err := Shard(scs, Spec{Index: 2, Count: 2}, "g", nil, ""); err == nil {
		t.Error("shard 2 of 2 selected scenarios, want an error")
	}
}
