package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/result"
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
