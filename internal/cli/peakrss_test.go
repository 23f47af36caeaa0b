package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestExecPeakRSSIsTheCommands runs `--exec true` with a 2 ms monitor interval (issue 22: it read
// about 72 MB, inferbench's own memory, from the process-tree sum and the reaped children's
// rusage) and checks that peak_rss_mb is the command's own: under 5 MB.
func TestExecPeakRSSIsTheCommands(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the command's own peak RSS is measured on Linux")
	}
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"run", "--exec", "true", "--iterations", "20", "--warmup", "0",
		"--monitor-interval", "2ms", "--output-dir", dir, "--format", "none"},
		IO{Stdout: &stdout, Stderr: &stderr, Env: os.Environ(), Dir: dir})
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "latest", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		Scenarios []struct {
			Metrics map[string]struct{ Value *float64 }
		}
	}
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	if len(run.Scenarios) != 1 {
		t.Fatalf("%d scenarios", len(run.Scenarios))
	}
	m, ok := run.Scenarios[0].Metrics["peak_rss_mb"]
	if !ok || m.Value == nil || *m.Value <= 0 || *m.Value >= 5 {
		if m.Value != nil {
			t.Errorf("peak_rss_mb = %v MB, want the command's own, under 5 MB", *m.Value)
		} else {
			t.Errorf("no peak_rss_mb")
		}
	}
}
