package run

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/suite"
)

// TestExpandLinearInIncludes: selecting the scenarios of a benchmark with many include entries
// took time growing with their square (the declared --set keys were gathered again for each
// scenario, reading every entry): 8,000 entries took 18 s in `inferbench list`, 2,000 0.7 s.
// Now once per benchmark: MaxScenarios entries take milliseconds. The bound below is 20 times
// what a loaded machine needs, and a tenth of what the quadratic loop took.
func TestExpandLinearInIncludes(t *testing.T) {
	var src strings.Builder
	src.WriteString("name: x\nsubject: {kind: exec, command: [\"true\"]}\nmatrix: {a: [0]}\ninclude:\n")
	n := suite.MaxScenarios - 1
	for i := range n {
		fmt.Fprintf(&src, "  - {a: %d}\n", i+1)
	}
	bs, err := suite.Parse("x.yaml", []byte(src.String()), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	scs, err := expandSelection(Selection{}, bs)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Expand of %d include entries took %v: quadratic again?", n, took)
	}
	if len(scs) != n+1 {
		t.Errorf("%d scenarios, want %d", len(scs), n+1)
	}
}
