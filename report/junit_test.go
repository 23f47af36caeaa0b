package report

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/stats"
)

// junitOf renders rep as JUnit and reads back each case's outcome by name: "failure: MESSAGE",
// "skipped: MESSAGE" or "passed".
func junitOf(t *testing.T, rep *compare.Report) (map[string]string, int) {
	t.Helper()
	var b strings.Builder
	if err := Comparison(&b, rep, "junit"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	out := map[string]string{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			switch {
			case c.Failure != nil:
				out[c.Name] = "failure: " + c.Failure.Message
			case c.Skipped != nil:
				out[c.Name] = "skipped: " + c.Skipped.Message
			default:
				out[c.Name] = "passed"
			}
		}
	}
	return out, doc.Failures
}

// An unknown row is visible in JUnit without failing: a change two sessions cannot tell and a
// paired A/B that spent its budget are skipped cases saying so, with the smallest change the
// comparison could have seen; --strict fails them, as it fails the text output, and so does a
// strict definition. Before, both were plain passed cases: a CI reading only the XML saw
// nothing, and passed under --strict while the text output failed.
func TestJUnitMarksUnknownRows(t *testing.T) {
	unknown := func(strict bool, strictDefs int) *compare.Report {
		return &compare.Report{Strict: strict, Unknown: 1, Unverified: 1, StrictUnverified: strictDefs, Rows: []compare.Row{
			{Benchmark: "b", Scenario: "sessions", Metric: "latency_ms", Better: "lower", Gated: true, Primary: true, Verdict: compare.Unknown,
				Old: 10, New: 12, Delta: 20, Threshold: 15, P: 0.001, Q: 0.001, OldN: 50, NewN: 50,
				Sessions: &compare.SessionNoise{Runs: 1, Need: 10, DriftPct: 4}},
			{Benchmark: "b", Scenario: "paired", Metric: "latency_ms", Better: "lower", Gated: true, Primary: true, Verdict: compare.Unknown,
				Old: 10, New: 10.2, Delta: 2, Threshold: 3, P: 0.2, Q: 0.2, DeltaCI: &stats.Interval{Lo: -1, Hi: 5, Confidence: 0.99},
				Warnings: []string{"unknown: B/A 1.0200 [0.9900, 1.0500] straddles +3% after 400 pairs (the budget of 400 pairs was spent); only a slowdown beyond about +5.0% could have been told apart here"}},
			{Benchmark: "b", Scenario: "paired", Metric: "rss_mean_mb", Better: "lower", Verdict: compare.Unknown, Old: 0, New: 1, P: 0.5},
			{Benchmark: "b", Scenario: "faster", Metric: "latency_ms", Better: "lower", Gated: true, Primary: true, Verdict: compare.Unknown,
				Old: 10, New: 8, Delta: -20, Threshold: 15, P: 0.001, Q: 0.001, OldN: 50, NewN: 50,
				Sessions: &compare.SessionNoise{Runs: 1, Need: 10, DriftPct: 4}},
		}}
	}
	cases, failures := junitOf(t, unknown(false, 0))
	if got := cases["sessions latency_ms"]; !strings.HasPrefix(got, "skipped: unknown between sessions") || !strings.Contains(got, "at least 15.0%") {
		t.Errorf("between sessions: %q, want a skipped case naming the smallest change the sessions could have seen", got)
	}
	if got := cases["paired latency_ms"]; !strings.HasPrefix(got, "skipped: unknown:") || !strings.Contains(got, "+5.0%") {
		t.Errorf("paired: %q, want a skipped case with the A/B's answer", got)
	}
	if got := cases["paired rss_mean_mb"]; got != "passed" || failures != 0 {
		t.Errorf("an ungated unknown: %q, %d failures; want a plain case and no failure", got, failures)
	}
	if got := cases["faster latency_ms"]; !strings.HasPrefix(got, "skipped: unknown between sessions: -20.0%, better beyond the threshold 15%, not an improvement") {
		t.Errorf("an improvement between sessions: %q, want a skipped case", got)
	}
	cases, failures = junitOf(t, unknown(true, 0))
	if got := cases["faster latency_ms"]; !strings.HasPrefix(got, "skipped:") {
		t.Errorf("--strict: an improvement between sessions: %q, want it skipped, not failed", got)
	}
	if failures != 2 || !strings.HasPrefix(cases["sessions latency_ms"], "failure:") || !strings.HasPrefix(cases["paired latency_ms"], "failure:") {
		t.Errorf("--strict: %d failures %v, want both unknown rows failed", failures, cases)
	}
	cases, failures = junitOf(t, unknown(false, 1))
	if failures != 1 || !strings.HasPrefix(cases["comparison passes"], "failure: FAIL") {
		t.Errorf("a strict definition's unknown: %d failures %v, want the comparison's failure", failures, cases)
	}
}
