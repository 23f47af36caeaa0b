package launch_test

import (
	"fmt"

	"github.com/inferbench/inferbench/launch"
)

// A definition's `server:` block: the command, with "{name}" replaced by each scenario's
// parameter and "{port}" by a free port, and the readiness probe a run waits for before
// measuring. Validate refuses a block that cannot start a server.
func ExampleConfig_Validate() {
	cfg := launch.Config{
		Command: []string{"vllm", "serve", "{model}", "--port", "{port}", "--max-num-seqs", "{max_seqs}"},
		Ready:   "http://127.0.0.1:{port}/health",
	}
	fmt.Println(cfg.Validate())
	cfg.Ready = "localhost:8000"
	fmt.Println(cfg.Validate())
	// Output:
	// <nil>
	// server: ready "localhost:8000": want an http(s):// URL or tcp://host:port
}
