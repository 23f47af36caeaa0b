// Package launch configures the server under test: a benchmark definition's `server:` block,
// which a run renders with each scenario's parameters and starts in its own process group, its
// output captured to a log file, until a readiness probe answers; it tears the whole group down
// afterwards (SIGTERM, then SIGKILL after a grace period). Consecutive scenarios whose rendered
// command is the same share one server.
package launch

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Config is a definition's `server:` block.
type Config struct {
	// Command is the server's argument vector. "{name}" is replaced by the scenario's parameter
	// name, and "{port}" by a free TCP port on 127.0.0.1 when no parameter of that name exists.
	// A first word "inferbench" is this program.
	Command []string `yaml:"command" json:"command"`
	// Env adds variables to the server's environment ("{name}" is replaced likewise).
	Env map[string]string `yaml:"env" json:"env,omitempty"`
	// Dir is the working directory, relative to the definition (default: the definition's).
	Dir string `yaml:"dir" json:"dir,omitempty"`
	// Ready is the readiness probe: an http(s) URL answered with 2xx, or tcp://host:port accepting
	// connections ("{port}" and parameters are replaced).
	Ready string `yaml:"ready" json:"ready"`
	// ReadyTimeout bounds the wait for readiness (default 2m).
	ReadyTimeout time.Duration `yaml:"ready_timeout" json:"ready_timeout,omitempty"`
	// StopTimeout is the grace period between SIGTERM and SIGKILL (default 10s).
	StopTimeout time.Duration `yaml:"stop_timeout" json:"stop_timeout,omitempty"`
}

// Validate reports a block that cannot start a server.
func (c *Config) Validate() error {
	if len(c.Command) == 0 || c.Command[0] == "" {
		return errors.New("server: command is required (an argument list: [vllm, serve, model, --port, \"{port}\"])")
	}
	if c.Ready == "" {
		return errors.New("server: ready is required (e.g. http://127.0.0.1:{port}/health or tcp://127.0.0.1:{port})")
	}
	if !strings.HasPrefix(c.Ready, "http://") && !strings.HasPrefix(c.Ready, "https://") && !strings.HasPrefix(c.Ready, "tcp://") {
		return fmt.Errorf("server: ready %q: want an http(s):// URL or tcp://host:port", c.Ready)
	}
	if c.ReadyTimeout < 0 || c.StopTimeout < 0 {
		return errors.New("server: ready_timeout and stop_timeout must not be negative")
	}
	return nil
}
