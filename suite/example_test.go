package suite_test

import (
	"context"
	"fmt"
	"log"

	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// The kind the definition below names. A program that links package run has the built-in kinds
// (exec, gofunc, mock, openai, worker) registered; one using suite alone registers its own.
func init() {
	subject.Register(subject.Kind{
		Name: "example-model",
		Open: func(ctx context.Context, s subject.Spec) (subject.Subject, error) {
			return nil, fmt.Errorf("%s: not opened in this example", s.Benchmark)
		},
	})
}

// Parse decodes definitions strictly (Load finds and parses every definition under some
// folders); Expand turns a benchmark's matrix into the scenarios the engine runs.
func ExampleParse() {
	const def = `
name: resnet50
model: resnet50
subject: {kind: example-model}
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
	// resnet50 (example-model, performance), 100 measured iterations
	//   resnet50/batch_size=1/dtype=float32 on cpu
	//   resnet50/batch_size=8/dtype=float32 on cpu
	//   resnet50/batch_size=8/dtype=bfloat16 on cpu
}
