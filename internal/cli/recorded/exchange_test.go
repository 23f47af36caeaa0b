package recorded

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
)

// TestExportDirection: github-action-benchmark gets the lower-is-better metrics, or with
// BiggerIsBetter the higher-is-better ones, of the run the reference names (here a run folder);
// an unknown format is a usage error.
func TestExportDirection(t *testing.T) {
	dir := t.TempDir()
	lat, tput := 12.5, 80.0
	r := &result.Run{Schema: result.Schema, ID: "r1", StartedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Scenarios: []result.Scenario{{Benchmark: "b", Scenario: "s", Subject: "fake", Status: result.StatusOK, Metrics: map[string]result.Metric{
			"latency_ms":   {Unit: "ms", Better: "lower", Value: &lat},
			"throughput_s": {Unit: "1/s", Better: "higher", Value: &tput},
		}}}}
	r.Tally()
	runDir := filepath.Join(dir, "r1")
	if err := os.Mkdir(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := result.Save(runDir, r); err != nil {
		t.Fatal(err)
	}
	src := &Source{Env: run.Env{Dir: dir}}
	defer src.Close()
	for _, tc := range []struct {
		bigger bool
		want   []string
	}{
		{false, []string{"b/s latency_ms"}},  // customSmallerIsBetter
		{true, []string{"b/s throughput_s"}}, // customBiggerIsBetter
	} {
		var buf bytes.Buffer
		if err := src.Export(t.Context(), "r1", ExportOptions{Format: "github-action-benchmark", BiggerIsBetter: tc.bigger}, &buf); err != nil {
			t.Fatal(err)
		}
		var got []gitHubBenchmark
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatalf("%v:\n%s", err, buf.Bytes())
		}
		var names []string
		for _, b := range got {
			names = append(names, b.Name)
		}
		if diff := cmp.Diff(tc.want, names); diff != "" {
			t.Errorf("BiggerIsBetter %v: names (-want +got):\n%s", tc.bigger, diff)
		}
	}
	if err := src.Export(t.Context(), "r1", ExportOptions{Format: "csv"}, &bytes.Buffer{}); !errors.Is(err, run.ErrUsage) {
		t.Errorf("format csv: %v, want a usage error", err)
	}
}
