package scaleout_test

import (
	"fmt"

	"github.com/inferbench/inferbench/internal/stage/scaleout"
)

// Three machines share six scenarios; with the durations of an earlier run the long one gets a
// machine to itself.
func ExampleSelect() {
	items := []scaleout.Item{
		{ID: "llama/batch=1", Cost: 30}, {ID: "llama/batch=8", Cost: 120},
		{ID: "bert/batch=1", Cost: 10}, {ID: "bert/batch=8", Cost: 25},
		{ID: "resnet/batch=1", Cost: 15}, {ID: "resnet/batch=8", Cost: 40},
	}
	for i := range 3 {
		mine, plan, _ := scaleout.Select(items, scaleout.Spec{Index: i, Count: 3})
		var ids []string
		for _, k := range mine {
			ids = append(ids, items[k].ID)
		}
		fmt.Printf("shard %d (%s, %.0f s): %v\n", i, plan.Balance, plan.Loads[i], ids)
	}
	// Output:
	// shard 0 (cost, 120 s): [llama/batch=8]
	// shard 1 (cost, 65 s): [bert/batch=1 resnet/batch=1 resnet/batch=8]
	// shard 2 (cost, 55 s): [llama/batch=1 bert/batch=8]
}
