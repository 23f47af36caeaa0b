// Package llamatest starts llama.cpp's own OpenAI-compatible server (llama-server) on a tiny
// random-weight model that it writes with scripts/tiny_gguf.py, for tests of the serving client
// and the server telemetry against a real server. Tests skip, with the reason, where the server
// binary or the gguf Python package is missing (`make venv llama-server` installs both), and
// fail instead where INFERBENCH_REQUIRE names llama-server or frameworks (package require).
package llamatest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/internal/testkit/require"
)

// Server is a running llama-server.
type Server struct {
	URL   string // the OpenAI API base, http://127.0.0.1:PORT/v1
	Base  string // http://127.0.0.1:PORT (/metrics, /health)
	Model string // the model alias the server answers to
	Log   *Log   // the server's output
}

// Log is a buffer safe for the server's writes and the test's reads.
type Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Binary returns llama-server's path: $INFERBENCH_LLAMA_SERVER, else llama-server on PATH.
func Binary() (string, error) {
	if p := os.Getenv("INFERBENCH_LLAMA_SERVER"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("INFERBENCH_LLAMA_SERVER: %w", err)
		}
		return p, nil
	}
	p, err := exec.LookPath("llama-server")
	if err != nil {
		return "", fmt.Errorf("llama.cpp's llama-server is neither in $INFERBENCH_LLAMA_SERVER nor on PATH (make llama-server builds it)")
	}
	return p, nil
}

// repoRoot finds the repository root (the folder holding scripts/tiny_gguf.py) above the test's
// package directory.
func repoRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "scripts", "tiny_gguf.py")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("scripts/tiny_gguf.py not found above the working directory")
		}
		d = parent
	}
}

// Start writes the tiny model and starts llama-server with `slots` parallel slots and its
// Prometheus endpoint on; the server is stopped when the test ends.
func Start(t testing.TB, slots int) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		require.Skipf(t, require.LlamaServer, "%v", err)
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	py := pyenv.Find(nil).Path
	if err := exec.Command(py, "-c", "import gguf, numpy").Run(); err != nil {
		require.Skipf(t, require.Frameworks, "the gguf package is not importable by %s (make venv installs it): %v", py, err)
	}
	model := filepath.Join(t.TempDir(), "tiny.gguf")
	if out, err := exec.Command(py, filepath.Join(root, "scripts", "tiny_gguf.py"), model).CombinedOutput(); err != nil {
		t.Fatalf("writing the tiny GGUF model: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Server{Base: "http://127.0.0.1:" + strconv.Itoa(port), Model: "tiny", Log: &Log{}}
	s.URL = s.Base + "/v1"
	ctx, cancel := context.WithCancel(context.Background())
	threads := strconv.Itoa(max(1, min(2, runtime.NumCPU())))
	cmd := exec.CommandContext(ctx, bin, "-m", model, "--alias", s.Model, "--host", "127.0.0.1",
		"--port", strconv.Itoa(port), "-c", strconv.Itoa(1024*slots), "--parallel", strconv.Itoa(slots),
		"--threads", threads, "--threads-batch", threads, "--metrics", "--seed", "1")
	cmd.Stdout, cmd.Stderr = s.Log, s.Log
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting %s: %v", bin, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cancel()
		<-exited
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.Base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-exited:
			t.Fatalf("llama-server exited before it was ready: %v\n%s", waitErr, s.Log)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("llama-server not ready after 60 s\n%s", s.Log)
		}
	}
}
