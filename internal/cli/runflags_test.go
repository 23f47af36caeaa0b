package cli

import (
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
