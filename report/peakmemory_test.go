package report

import (
	"strings"
	"testing"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// TestMarkdownPeakMemoryFromExec: a command's peak memory is its own peak_rss_mb (issue 22), and
// the pull-request table's "Peak memory" column shows it instead of "–".
func TestMarkdownPeakMemoryFromExec(t *testing.T) {
	run := func(id string, rss float64) *result.Run {
		lat := result.NewMetric("latency_ms")
		lat.Samples = []float64{10, 10.1, 9.9, 10.2, 9.8}
		sum, _ := stats.Summarize(lat.Samples)
		lat.Summary = &sum
		mem := result.NewMetric("peak_rss_mb")
		mem.Value = &rss
		return &result.Run{Schema: result.Schema, ID: id, Scenarios: []result.Scenario{{
			Benchmark: "exec", Scenario: "default", Subject: "exec", Status: result.StatusOK,
			Metrics: map[string]result.Metric{"latency_ms": lat, "peak_rss_mb": mem}}}}
	}
	var b strings.Builder
	if err := CompareMarkdown(&b, compare.Runs(run("a", 1.84), run("b", 1.77), compare.Config{})); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "1.84 → 1.77") {
		t.Errorf("the Peak memory column lacks the command's peak_rss_mb:\n%s", b.String())
	}
}
