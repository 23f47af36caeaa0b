package explain_test

import (
	"fmt"

	"github.com/inferbench/inferbench/internal/explain"
)

// Two runs' callgrind profiles of one command: grow loops twice as long in the new one.
func Example() {
	old, err := explain.Load("testdata", []string{"callgrind.out.old"})
	if err != nil {
		fmt.Println(err)
		return
	}
	nw, err := explain.Load("testdata", []string{"callgrind.out.new"})
	if err != nil {
		fmt.Println(err)
		return
	}
	x, err := explain.Diff(old, nw, explain.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := explain.Scenario{Benchmark: "cg", Scenario: "default", Metric: "instructions", DeltaPct: 19.9, Explanation: x}
	fmt.Println(s.Headline())
	e := x.Named[0]
	fmt.Printf("%s: self %s → %s, inclusive %s → %s per call\n", e.Name,
		explain.FormatCost(e.OldSelf, x.Unit), explain.FormatCost(e.NewSelf, x.Unit),
		explain.FormatCost(e.OldIncl, x.Unit), explain.FormatCost(e.NewIncl, x.Unit))
	// Output:
	// instructions +19.9%; explained 100%: `grow` +60k Ir per call (100%)
	// grow: self 60k Ir → 120k Ir, inclusive 60k Ir → 120k Ir per call
}
