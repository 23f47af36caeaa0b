package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRunCarriesResources runs a command through the CLI and checks run.json.
func TestRunCarriesResources(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process monitor reads /proc")
	}
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"run", "--exec", "sleep 0.05", "--iterations", "5", "--warmup", "0",
		"--monitor-interval", "10ms", "--output-dir", dir, "--format", "none", "--monitor-overhead"},
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
			Extra   struct {
				Resources struct {
					Tree      string
					Samples   int
					Timelines []struct{ Name string }
					Overhead  *struct {
						LatencyOffMS float64 `json:"latency_off_ms"`
					} `json:"monitor_overhead"`
				}
			}
		}
	}
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	if len(run.Scenarios) != 1 {
		t.Fatalf("%d scenarios", len(run.Scenarios))
	}
	sc := run.Scenarios[0]
	for _, n := range []string{"peak_rss_mb", "rss_mean_mb", "cpu_s"} {
		if m, ok := sc.Metrics[n]; !ok || m.Value == nil || *m.Value < 0 {
			t.Errorf("metric %s missing", n)
		}
	}
	if r := sc.Extra.Resources; r.Samples < 5 || len(r.Timelines) == 0 || r.Tree != "harness" {
		t.Errorf("resources: %d samples, %d timelines, tree %q", r.Samples, len(r.Timelines), r.Tree)
	}
	if ov := sc.Extra.Resources.Overhead; ov == nil || ov.LatencyOffMS <= 0 {
		t.Errorf("no monitor overhead in run.json (stdout:\n%s)", &stdout)
	}
	if !strings.Contains(stdout.String(), "monitor overhead") {
		t.Errorf("stdout lacks the overhead table:\n%s", &stdout)
	}
}

func TestMonitorFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--monitor-interval", "0s"},
		{"--pue", "0.5"},
		{"--no-monitor", "--monitor-overhead"},
	} {
		dir := t.TempDir()
		var out bytes.Buffer
		a := append([]string{"run", "--exec", "true", "--iterations", "1", "--output-dir", dir}, args...)
		if code := Main(context.Background(), a, IO{Stdout: &out, Stderr: &out, Env: os.Environ(), Dir: dir}); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, ExitUsage, &out)
		}
	}
}
