package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// TestNotesRanked: the lines under the table came scenario by scenario, so a 240% CV on a 300 ns
// Go function, expected there, read as an alarm before a failure further down. Now failures come
// first, then warnings, then skips, and expected effects last as one-line notes.
func TestNotesRanked(t *testing.T) {
	r := &result.Run{Scenarios: []result.Scenario{
		{Benchmark: "sha", Scenario: "default", Status: result.StatusOK, Warnings: []string{
			"expected: latency CV 240% at a median of 300ns: calls this short are spread by timer resolution, scheduling and GC pauses; the median is the stable figure to compare",
		}},
		{Benchmark: "gpu", Scenario: "default", Status: result.StatusSkipped, SkipReason: "no GPU"},
		{Benchmark: "mock", Scenario: "default", Status: result.StatusOK, Warnings: []string{"noisy: latency CV 30% (above 10%)"}},
		{Benchmark: "crash", Scenario: "default", Status: result.StatusFailed, Error: "crash/default: worker exited"},
	}}
	want := []string{
		"FAILED  crash/default: worker exited",
		"warning mock/default: noisy: latency CV 30% (above 10%)",
		"skipped gpu/default: no GPU",
		"note    sha/default: expected: latency CV 240% at a median of 300ns: calls this short are spread by timer resolution, scheduling and GC pauses; the median is the stable figure to compare",
	}
	if diff := cmp.Diff(want, notesOf(r)); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	adv := runAdvice(r)
	var levels []string
	for _, a := range adv {
		levels = append(levels, a.Level+" "+a.Scope)
	}
	wantLevels := []string{"error crash/default", "warn mock/default", "info sha/default", "info gpu/default"}
	if diff := cmp.Diff(wantLevels, levels); diff != "" {
		t.Errorf("advice levels (-want +got):\n%s", diff)
	}
}

// An instruction-mode run's table shows the counts, and says its times are valgrind's (issue
// 42: it showed valgrind's latency and no count).
func TestTableOfACountedRun(t *testing.T) {
	sum := func(v float64) *stats.Summary { return &stats.Summary{N: 3, Median: v} }
	r := &result.Run{Scenarios: []result.Scenario{{Benchmark: "text", Scenario: "default", Status: result.StatusOK,
		Metrics: map[string]result.Metric{"instructions": {Summary: sum(13_170_000)}, "latency_ms": {Summary: sum(1900)}}}}}
	r.Tally()
	var b strings.Builder
	if err := Table(&b, r); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "INSTRUCTIONS P50") || !strings.Contains(out, "13.17M") || !strings.Contains(out, "under valgrind") {
		t.Errorf("the table of a counted run:\n%s", out)
	}
}
