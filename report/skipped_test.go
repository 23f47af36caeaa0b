package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// TestTableGroupsSkipped: skipped scenarios are a line per reason below the table, not a row of
// dashes each (issue 23: the demo printed 43 of them).
func TestTableGroupsSkipped(t *testing.T) {
	r := &result.Run{}
	r.Scenarios = append(r.Scenarios, result.Scenario{Benchmark: "ok", Scenario: "default", Status: result.StatusOK})
	for i := range 20 {
		r.Scenarios = append(r.Scenarios, result.Scenario{Benchmark: "vision", Scenario: fmt.Sprintf("n=%d", i), Status: result.StatusSkipped, SkipReason: "needs a GPU"})
	}
	r.Scenarios = append(r.Scenarios, result.Scenario{Benchmark: "jax", Scenario: "default", Status: result.StatusSkipped, SkipReason: "python module jax is not installed"})
	r.Summary = result.Summary{Total: 22, Succeeded: 1, Skipped: 21}
	var b bytes.Buffer
	if err := Table(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "\n"); n > 10 {
		t.Errorf("%d lines for 1 measured and 21 skipped scenarios:\n%s", n, out)
	}
	for _, want := range []string{"skipped vision/n=0 and 19 more: needs a GPU", "skipped jax/default: python module jax is not installed"} {
		if !strings.Contains(out, want) {
			t.Errorf("no line %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "vision/n=1 ") {
		t.Errorf("a skipped scenario has its own row:\n%s", out)
	}
}

// TestTableTokensPerSecond: a Python class's own tokens/s (tokens_per_s, seed 004's
// tokens_per_second) fills the TOKENS/s column (issue 23: it showed "-").
func TestTableTokensPerSecond(t *testing.T) {
	r := &result.Run{Scenarios: []result.Scenario{{
		Benchmark: "llama_benchmark.LlamaBenchmark", Scenario: "variant=eager", Status: result.StatusOK,
		Metrics: map[string]result.Metric{
			"latency_ms":   {Unit: "ms", Summary: &stats.Summary{N: 5, Median: 20, P95: 21, P99: 21}},
			"ttft_ms":      {Unit: "ms", Summary: &stats.Summary{N: 5, Median: 3}},
			"tokens_per_s": {Unit: "tokens/s", Summary: &stats.Summary{N: 5, Mean: 87.3, Median: 87.3}},
		},
	}}}
	var b bytes.Buffer
	if err := Table(&b, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[0], "TOKENS/s") || !strings.HasSuffix(strings.TrimSpace(lines[1]), "87.30") {
		t.Errorf("TOKENS/s column:\n%s", b.String())
	}
}

// TestNotesGroupWarnings: one warning of one kind on many scenarios (noise on a busy machine) is
// one line naming the first and the count, so the demo's summary fits a screen (issue 23).
func TestNotesGroupWarnings(t *testing.T) {
	r := &result.Run{}
	for i := range 12 {
		r.Scenarios = append(r.Scenarios, result.Scenario{Benchmark: "m", Scenario: fmt.Sprintf("n=%d", i), Status: result.StatusOK,
			Warnings: []string{fmt.Sprintf("noisy: latency CV %d%% (above 10%%); consider more iterations or a quieter machine", 11+i)}})
	}
	r.Scenarios[3].Warnings = append(r.Scenarios[3].Warnings, "budget m/n=3 cpu_pct not measured")
	notes := notesOf(r)
	want := []string{
		"warning m/n=0 and 11 more (each with its own figures in report.html): noisy: latency CV 11% (above 10%); consider more iterations or a quieter machine",
		"warning m/n=3: budget m/n=3 cpu_pct not measured",
	}
	if fmt.Sprint(notes) != fmt.Sprint(want) {
		t.Errorf("notes\n%q\nwant\n%q", notes, want)
	}
}
