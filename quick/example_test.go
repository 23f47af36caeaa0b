package quick_test

import (
	"fmt"
	"log"

	"github.com/inferbench/inferbench/quick"
)

// A quick mode builds benchmarks from a few settings, as the command line's --exec, --openai and
// --framework do; run.Run takes them in Options.Selection.Benchmarks.
func ExampleOpenAI() {
	benches, err := quick.OpenAI{
		URL:         "http://localhost:8000/v1",
		Model:       "meta-llama/Llama-3.1-8B-Instruct",
		Concurrency: []int{1, 8, 64},
		Requests:    200,
	}.Benchmarks()
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range benches {
		fmt.Printf("%s (subject %s, load %s)\n", b.Name, b.Kind, b.Load.Mode)
		for _, sc := range b.Expand(nil) {
			fmt.Println(" ", sc.Name)
		}
	}
	// Output:
	// openai (subject openai, load concurrency)
	//   concurrency=1
	//   concurrency=8
	//   concurrency=64
}

// Exec is a benchmark of one command, run once per iteration.
func ExampleExec() {
	benches, err := quick.Exec{Command: "gzip -k -f model.bin", Name: "gzip"}.Benchmarks()
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range benches {
		fmt.Printf("%s (subject %s)\n", b.Name, b.Kind)
	}
	// Output:
	// gzip (subject exec)
}
