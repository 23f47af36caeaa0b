package inferbench_test

import (
	"context"
	"fmt"
	"hash/crc32"
	"log"
	"os"
	"strings"

	"github.com/inferbench/inferbench"
)

// Register makes a Go function a benchmark of its name, run once per iteration; RegisterSetup
// prepares inputs once per scenario, from the scenario's parameters. A program whose main calls
// inferbench.Main after registering is an inferbench binary whose `run` runs them beside the
// definitions under benches/; Run is Main without the exit, here listing what `run` would run.
func ExampleRegister() {
	inferbench.Register("example/crc-4k", func(ctx context.Context) error {
		_ = crc32.ChecksumIEEE(make([]byte, 4096))
		return nil
	})
	inferbench.RegisterSetup("example/join", func(ctx context.Context, p inferbench.Params) (func(context.Context) error, func(), error) {
		words := strings.Fields(strings.Repeat("token ", p.Int("words", 1000)))
		return func(ctx context.Context) error {
			_ = strings.Join(words, " ")
			return nil
		}, nil, nil
	})

	empty, err := os.MkdirTemp("", "inferbench-example") // no definitions: the registered functions only
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(empty)
	code := inferbench.Run([]string{"list", empty}, inferbench.Options{Registered: true})
	fmt.Println("exit code", code)
	// Output:
	// BENCHMARK       SCENARIO  CATEGORY  MODEL  SUBJECT  SOURCE        SKIPPED
	// example/crc-4k  default   unit      -      gofunc   (registered)  -
	// example/join    default   unit      -      gofunc   (registered)  -
	//
	// 2 benchmarks, 2 scenarios
	// exit code 0
}
