package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/subject"
)

// TestShortCallCVIsExpected: a 240% CV on a 300 ns Go function was reported as "noisy" like a
// real problem; it is expected there, says why in one line and comes after the warnings that
// matter.
func TestShortCallCVIsExpected(t *testing.T) {
	lat := result.NewMetric("latency_ms")
	lat.Summary = &stats.Summary{N: 50, Median: 0.0003, CV: 2.4, Outliers: 10}
	r := &result.Scenario{Metrics: map[string]result.Metric{"latency_ms": lat}}
	w := warnings(r, false)
	if len(w) != 2 || !strings.HasPrefix(w[0], "10 outliers") || !strings.HasPrefix(w[1], "expected: latency CV 240% at a median of 300ns") {
		t.Errorf("300 ns, CV 240%%, 10 outliers: warnings %q", w)
	}
	lat.Summary = &stats.Summary{N: 50, Median: 12, CV: 0.3}
	r.Metrics["latency_ms"] = lat
	if w := warnings(r, false); len(w) != 1 || !strings.HasPrefix(w[0], "noisy: latency CV 30%") {
		t.Errorf("12 ms, CV 30%%: warnings %q", w)
	}
}

type oneAtATime struct{}

func (oneAtATime) Do(context.Context, subject.Request) (subject.Observation, error) {
	return subject.Observation{}, nil
}
func (oneAtATime) Close() error       { return nil }
func (oneAtATime) OneAtATime() string { return "one worker process runs one call at a time" }

// TestSequentialSubjectUnderConcurrency: concurrency over a single worker process ran one call
// at a time without a word; it warns now.
func TestSequentialSubjectUnderConcurrency(t *testing.T) {
	for _, tc := range []struct {
		cfg  load.Config
		warn bool
	}{
		{load.Config{Mode: "concurrency", Concurrency: 8}, true},
		{load.Config{Mode: "concurrency", Concurrency: 1}, false},
		{load.Config{Mode: "rate"}, true},
		{load.Config{}, false}, // single: one call at a time is what it asks
	} {
		got := sequentialWarning(oneAtATime{}, tc.cfg)
		if (got != "") != tc.warn || (tc.warn && !strings.Contains(got, "one worker process")) {
			t.Errorf("%+v: warning %q, want one: %v", tc.cfg, got, tc.warn)
		}
	}
}
