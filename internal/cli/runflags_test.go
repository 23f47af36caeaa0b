package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSLOSearchGone: run's bisection went; capacity answers the question.
func TestSLOSearchGone(t *testing.T) {
	code, _, errOut := runCLI(t, t.TempDir(), nil, "run", "--openai", "http://127.0.0.1:1/v1", "--model", "m", "--sweep",
		"--slo", "ttft_ms.p99=500", "--slo-search", "5")
	if code != ExitUsage || !strings.Contains(errOut, "--slo-search was removed") || !strings.Contains(errOut, "inferbench capacity") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming inferbench capacity", code, errOut)
	}
}

// TestRequestsAlias: --requests, --iterations and --measurement-iterations are one count.
func TestRequestsAlias(t *testing.T) {
	for _, name := range []string{"--requests", "--iterations", "--measurement-iterations"} {
		dir := t.TempDir()
		code, _, errOut := runCLI(t, dir, nil, "run", "--exec", "echo x >> calls.txt", "--shell", name, "3", "--warmup", "0",
			"--no-monitor", "--no-store", "--format", "none")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		b, err := os.ReadFile(filepath.Join(dir, "calls.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "x"); n != 3 {
			t.Errorf("%s 3: %d calls", name, n)
		}
	}
}

// TestCSVHelp: --csv says what the file is, in the product's words.
func TestCSVHelp(t *testing.T) {
	c, _, _ := newRoot(&IO{}).Find([]string{"run"})
	u := c.Flags().Lookup("csv").Usage
	if strings.Contains(u, "seed") || !strings.Contains(u, "summary.csv") {
		t.Errorf("--csv's help: %q", u)
	}
}
