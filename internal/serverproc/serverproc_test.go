package serverproc

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/launch"
)

// TestMain lets the test binary play the server: with LAUNCH_TEST_SERVE=addr it serves /health
// there (after LAUNCH_TEST_DELAY) and prints its arguments; with LAUNCH_TEST_FAIL it exits at once.
func TestMain(m *testing.M) {
	if os.Getenv("LAUNCH_TEST_FAIL") != "" {
		fmt.Println("cannot load the model")
		os.Exit(3)
	}
	if addr := os.Getenv("LAUNCH_TEST_SERVE"); addr != "" {
		fmt.Println("args:", strings.Join(os.Args[1:], " "))
		if d, err := time.ParseDuration(os.Getenv("LAUNCH_TEST_DELAY")); err == nil {
			time.Sleep(d)
		}
		http.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) {})
		fmt.Println(http.ListenAndServe(addr, nil))
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func self(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestStartReadyStop(t *testing.T) {
	log := filepath.Join(t.TempDir(), "servers", "s.log")
	cfg := launch.Config{
		Command: []string{self(t), "--max-seqs", "{max_seqs}", "--port", "{port}"},
		Env:     map[string]string{"LAUNCH_TEST_SERVE": "127.0.0.1:{port}", "LAUNCH_TEST_DELAY": "300ms"},
		Ready:   "http://127.0.0.1:{port}/health",
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p, err := Render(cfg, map[string]any{"max_seqs": 64}, ".", log)
	if err != nil {
		t.Fatal(err)
	}
	if p.Port() == 0 || !strings.Contains(p.String(), fmt.Sprintf("--max-seqs 64 --port %d", p.Port())) {
		t.Fatalf("rendered %q (port %d)", p, p.Port())
	}
	start := time.Now()
	s, err := p.Start(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The probe waited for the server's delay.
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("ready after %v, before the server listened", d)
	}
	if !s.Running() || !p.Same(s) {
		t.Error("server not running, or not recognised as the plan's")
	}
	// Another scenario with the same parameters (and another drawn port) can share it; one with
	// other parameters cannot.
	again, _ := Render(cfg, map[string]any{"max_seqs": 64}, ".", log)
	other, _ := Render(cfg, map[string]any{"max_seqs": 128}, ".", log)
	if !again.Same(s) || other.Same(s) {
		t.Errorf("same: %v (want true), other: %v (want false)", again.Same(s), other.Same(s))
	}
	s.Stop()
	s.Stop() // twice is harmless
	if s.Running() {
		t.Fatal("server still running after Stop")
	}
	b, err := os.ReadFile(log)
	if err != nil || !strings.Contains(string(b), "args: --max-seqs 64") {
		t.Errorf("log %q, %v", b, err)
	}
	if _, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/health", p.Port())); err == nil {
		t.Error("server still answers after Stop")
	}
}

func TestStartFailures(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		cfg  launch.Config
		want []string
	}{
		// The process exits before it is ready: the error quotes its log.
		{"exits", launch.Config{Command: []string{self(t)}, Env: map[string]string{"LAUNCH_TEST_FAIL": "1"}, Ready: "tcp://127.0.0.1:{port}"},
			[]string{"exited before it was ready", "cannot load the model"}},
		// Nothing ever listens: the probe times out.
		{"never ready", launch.Config{Command: []string{"sleep", "30"}, Ready: "http://127.0.0.1:{port}/health", ReadyTimeout: 300 * time.Millisecond},
			[]string{"not ready after 300ms"}},
		{"no such command", launch.Config{Command: []string{"/nonexistent/server"}, Ready: "tcp://127.0.0.1:1"},
			[]string{"starting /nonexistent/server"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Render(tt.cfg, nil, ".", filepath.Join(dir, tt.name+".log"))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			s, err := p.Start(context.Background(), nil)
			if err == nil {
				s.Stop()
				t.Fatal("started")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("took %v to fail", time.Since(start))
			}
		})
	}
}

func TestRenderAndValidate(t *testing.T) {
	if _, err := Render(launch.Config{Command: []string{"serve", "--tp", "{tp}"}, Ready: "tcp://x:1"}, nil, ".", ""); err == nil || !strings.Contains(err.Error(), "{tp}") {
		t.Errorf("missing parameter: %v", err)
	}
	for _, c := range []launch.Config{{}, {Command: []string{"x"}}, {Command: []string{"x"}, Ready: "localhost:8000"}} {
		if c.Validate() == nil {
			t.Errorf("Validate(%+v) = nil", c)
		}
	}
}
