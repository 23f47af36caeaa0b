package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// execRun runs a command through --exec --exec-metrics into dir/name and returns the folder.
func execRun(t *testing.T, dir, name, line string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	code, _, errOut := runCLI(t, "", nil, "run", "--exec", "echo '"+line+"'", "--exec-metrics", "--no-monitor",
		"--iterations", "12", "--warmup", "0", "--output-dir", out, "--format", "none")
	if code != 0 {
		t.Fatalf("run %s: exit %d: %s", name, code, errOut)
	}
	return filepath.Join(out, result.LatestLink)
}

// Seed 000's format: a benchmark returning {"throughput": 1000} that improves by 26% passes the
// gate, and compare says throughput is higher-is-better. Failed before: exit 3, "REGRESSION".
func TestCompareSeedThroughputImproves(t *testing.T) {
	dir := t.TempDir()
	old := execRun(t, dir, "old", `{"throughput": 1000}`)
	nw := execRun(t, dir, "new", `{"throughput": 1260}`)
	// The harness's own latency of echo is noise here: only throughput is judged.
	code, out, errOut := runCLI(t, "", nil, "compare", old, nw, "--threshold", "latency=1000")
	if code != ExitOK || !strings.Contains(out, "improvement") || strings.Contains(out, "REGRESSION") {
		t.Fatalf("compare: exit %d, want 0 with an improvement\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "throughput") || !strings.Contains(out, "higher") {
		t.Errorf("compare does not show throughput as higher-is-better:\n%s", out)
	}
}

// A figure may declare its unit and direction in the command's JSON line; a metric with no known
// direction is reported as changed and never fails the gate.
func TestCompareDeclaredAndUnknownDirections(t *testing.T) {
	dir := t.TempDir()
	old := execRun(t, dir, "old", `{"recall_at_k_loss": {"value": 0.5, "better": "higher", "unit": "ratio"}, "widgets": 10}`)
	nw := execRun(t, dir, "new", `{"recall_at_k_loss": {"value": 0.6, "better": "higher", "unit": "ratio"}, "widgets": 30}`)
	r, err := result.Load(old)
	if err != nil {
		t.Fatal(err)
	}
	if m := r.Scenarios[0].Metrics["recall_at_k_loss"]; m.Better != "higher" || m.Unit != "ratio" {
		t.Errorf("declared metric recorded as %+v, want unit ratio, higher", m)
	}
	if m := r.Scenarios[0].Metrics["widgets"]; m.Better != "" {
		t.Errorf("widgets recorded with direction %q, want none", m.Better)
	}
	code, out, errOut := runCLI(t, "", nil, "compare", old, nw, "--threshold", "latency=1000")
	if code != ExitOK || !strings.Contains(out, "changed (direction unknown") || !strings.Contains(out, "no known better direction") {
		t.Fatalf("compare: exit %d, want 0 with widgets changed and not gated\n%s%s", code, out, errOut)
	}
}
