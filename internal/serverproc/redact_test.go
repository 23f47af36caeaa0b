package serverproc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/launch"
)

// A launched server's log goes through the run's redactor: a server that prints its own
// command line (an --api-key) or a key leaves no secret in servers/*.log. Before, the log was the
// server's output as it was.
func TestServerLogRedacted(t *testing.T) {
	log := filepath.Join(t.TempDir(), "servers", "s.log")
	cfg := launch.Config{
		Command: []string{self(t), "--api-key=server-key-31337", "--port", "{port}"},
		Env:     map[string]string{"LAUNCH_TEST_SERVE": "127.0.0.1:{port}"},
		Ready:   "http://127.0.0.1:{port}/health",
	}
	p, err := Render(cfg, nil, ".", log)
	if err != nil {
		t.Fatal(err)
	}
	p.Redact(redact.New("server-key-31337"))
	s, err := p.Start(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Stop()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "args: --api-key=xxxxx --port") {
		t.Errorf("server log %q: want the args line, redacted", data)
	}
	if strings.Contains(string(data), "server-key-31337") {
		t.Errorf("server log holds the key: %q", data)
	}
}
