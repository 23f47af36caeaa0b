package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/stage/recovery"
	"github.com/inferbench/inferbench/result"
)

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	runDir := filepath.Join(dir, "benchmark_results", "20261122_143005")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	v := 3.5
	r := &result.Run{Schema: result.Schema, ID: "20261122_143005", StartedAt: time.Date(2026, 11, 22, 14, 30, 5, 0, time.UTC),
		Scenarios: []result.Scenario{{Benchmark: "<script>alert(1)</script>", Scenario: "default", Status: result.StatusOK,
			Metrics: map[string]result.Metric{"throughput_ips": {Unit: "items/s", Better: "higher", Value: &v}}}}}
	r.Tally()
	if err := result.Save(runDir, r); err != nil {
		t.Fatal(err)
	}
	if err := recovery.LinkLatest(filepath.Join(dir, "benchmark_results"), runDir); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		file string // written, relative to dir
		out  string // in stdout
	}{
		{[]string{"report"}, ExitOK, "benchmark_results/20261122_143005/report.html", "report: "},                   // latest, into its folder
		{[]string{"report", "20261122_143005", "-o", "x.html"}, ExitOK, "x.html", "x.html"},                         // a run id, to a file
		{[]string{"report", "latest", "--format", "table"}, ExitOK, "", "1 scenarios: 1 ok"},                        // the table
		{[]string{"report", "latest", "--format", "pdf"}, ExitUsage, "", ""},                                        // bad format
		{[]string{"serve", "--addr", "0.0.0.0:0"}, ExitUsage, "", ""},                                               // no token off loopback
		{[]string{"run", "--metrics-addr", "10.1.2.3:0", "--exec", "true", "--iterations", "1"}, ExitUsage, "", ""}, // same for run
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), c.args, IO{Stdout: &out, Stderr: &errb, Dir: dir, Env: []string{"CI=1"}})
		if code != c.code {
			t.Errorf("%v: exit %d, want %d; stderr: %s", c.args, code, c.code, errb.String())
			continue
		}
		if !strings.Contains(out.String(), c.out) {
			t.Errorf("%v: stdout %q lacks %q", c.args, out.String(), c.out)
		}
		if c.file != "" {
			b, err := os.ReadFile(filepath.Join(dir, c.file))
			if err != nil {
				t.Errorf("%v: %v", c.args, err)
				continue
			}
			if strings.Contains(string(b), "<script>alert(1)") || !strings.Contains(string(b), "&lt;script&gt;alert(1)") {
				t.Errorf("%v: the benchmark name is not escaped in %s", c.args, c.file)
			}
		}
	}
}
