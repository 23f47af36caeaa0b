package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/subject"
)

// TestShortCallCVIsExpected: a 240% CV on a 300 ns Go function was reported as "noisy" like a
// real problem, and the outliers of a 36 ns function as an alarm ("warning go-noop/default: 39333
// outliers in 100000 latency samples"); both are expected there (timer resolution, GC,
// preemption), said in one note line with the reason. Longer calls keep both warnings.
func TestShortCallCVIsExpected(t *testing.T) {
	for _, tc := range []struct {
		name string
		sum  stats.Summary
		want []string
	}{
		{"300 ns, CV 240%, 10 outliers", stats.Summary{N: 50, Median: 0.0003, CV: 2.4, Outliers: 10},
			[]string{"expected: latency CV 240% and 10 outliers in 50 latency samples at a median of 300ns: calls this short are spread by timer resolution"}},
		{"36 ns, quiet CV, many outliers", stats.Summary{N: 100000, Median: 0.000036, CV: 0.05, Outliers: 39333},
			[]string{"expected: 39333 outliers in 100000 latency samples at a median of 36ns: calls this short"}},
		{"300 ns, quiet", stats.Summary{N: 50, Median: 0.0003, CV: 0.05, Outliers: 2}, nil},
		{"12 ms, CV 30%, 10 outliers", stats.Summary{N: 50, Median: 12, CV: 0.3, Outliers: 10},
			[]string{"noisy: latency CV 30%", "10 outliers in 50 latency samples"}},
	} {
		lat := result.NewMetric("latency_ms")
		lat.Summary = &tc.sum
		w := warnings(&result.Scenario{Metrics: map[string]result.Metric{"latency_ms": lat}}, false)
		ok := len(w) == len(tc.want)
		for i := 0; ok && i < len(w); i++ {
			ok = strings.HasPrefix(w[i], tc.want[i])
		}
		if !ok {
			t.Errorf("%s: warnings %q, want lines starting %q", tc.name, w, tc.want)
		}
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

// TestRankWarnings: expected effects go after the alarms, each group in its order.
func TestRankWarnings(t *testing.T) {
	ws := []string{"expected: profiled 20 extra calls", "noisy: latency CV 30%", "expected: latency CV 240%", "only 5 latency samples"}
	rankWarnings(ws)
	want := []string{"noisy: latency CV 30%", "only 5 latency samples", "expected: profiled 20 extra calls", "expected: latency CV 240%"}
	if !slices.Equal(ws, want) {
		t.Errorf("ranked %q, want %q", ws, want)
	}
}
