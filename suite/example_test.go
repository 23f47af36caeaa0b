package suite_test

import (
	"fmt"
	"log"

	"github.com/inferbench/inferbench/suite"
)

// Parse decodes definitions strictly (Load finds and parses every definition under some
// folders). The kind a definition names must be registered: package run registers the built-in
// ones, and this package's tests register exec and mock. Expand turns a benchmark's matrix into
// the scenarios the engine runs.
func ExampleParse() {
	const def = `
name: resnet50
model: resnet50
subject: {kind: mock}
params: {device: cpu}
matrix:
  batch_size: [1, 8]
  dtype: [float32, bfloat16]
exclude:
  - {batch_size: 1, dtype: bfloat16}
load: {warmup_iterations: 5, measurement_iterations: 100}
budgets: {latency_ms.p95: "<= 25"}
`
	benches, err := suite.Parse("benches/performance/resnet50.yaml", []byte(def), nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range benches {
		fmt.Printf("%s (%s, %s), %d measured iterations\n", b.Name, b.Kind, b.Category, *b.Load.MeasurementIterations)
		for _, sc := range b.Expand(nil) {
			fmt.Printf("  %s on %s\n", sc.ID(), sc.Params.String("device", "?"))
		}
	}
	// Output:
	// resnet50 (mock, performance), 100 measured iterations
	//   resnet50/batch_size=1/dtype=float32 on cpu
	//   resnet50/batch_size=8/dtype=float32 on cpu
	//   resnet50/batch_size=8/dtype=bfloat16 on cpu
}
