package serverproc_test

import (
	"fmt"
	"log"

	"github.com/inferbench/inferbench/internal/serverproc"
	"github.com/inferbench/inferbench/launch"
)

// Render fills a definition's `server:` block with a scenario's parameters; Start then starts
// the server in its own process group, waits for its readiness probe, and Stop tears it down.
// Consecutive scenarios whose Plans are the Same share one server.
func ExampleRender() {
	cfg := launch.Config{
		Command: []string{"vllm", "serve", "{model}", "--port", "{port}", "--max-num-seqs", "{max_seqs}"},
		Ready:   "http://127.0.0.1:{port}/health",
	}
	if err := cfg.Validate(); err != nil {
		log.Fatal(err)
	}
	params := map[string]any{"model": "Qwen/Qwen2.5-0.5B", "port": 8011, "max_seqs": 64}
	plan, err := serverproc.Render(cfg, params, ".", "")
	if err != nil {
		log.Fatal(err)
	}
	// Without a "port" parameter, Render draws a free port for "{port}" (plan.Port()).
	fmt.Println(plan)
	// Output:
	// vllm serve Qwen/Qwen2.5-0.5B --port 8011 --max-num-seqs 64
}
