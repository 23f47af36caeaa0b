package report

import (
	"math"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/compare"
)

// The text comparison shows the primary rows and failing ones, counts the others, and shows
// every row on request; each row says which direction is better.
func TestCompareTextPrimaryFirst(t *testing.T) {
	row := func(metric string, primary bool, verdict, better string) compare.Row {
		return compare.Row{Benchmark: "b", Scenario: "s", Metric: metric, Primary: primary, Verdict: verdict, Better: better,
			Old: 1, New: 1, P: math.NaN(), Q: math.NaN()}
	}
	rep := &compare.Report{Rows: []compare.Row{
		row("latency_ms", true, compare.Unchanged, "lower"),
		row("load_time_ms", false, compare.Unknown, "lower"),
		row("io_read_mb", false, compare.Regression, "lower"),
		row("widgets", true, compare.Changed, ""),
	}}
	var short, all strings.Builder
	if err := CompareText(&short, rep); err != nil {
		t.Fatal(err)
	}
	CompareTextAll(&all, rep)
	s := short.String()
	if strings.Contains(s, "load_time_ms") || !strings.Contains(s, "io_read_mb") || !strings.Contains(s, "(1 rows of secondary metrics") {
		t.Errorf("CompareText:\n%s", s)
	}
	if !strings.Contains(s, "BETTER") || !strings.Contains(s, "changed (direction unknown: not gated)") {
		t.Errorf("CompareText lacks the direction column or the changed verdict:\n%s", s)
	}
	if !strings.Contains(all.String(), "load_time_ms") {
		t.Errorf("CompareTextAll:\n%s", all.String())
	}
}

// TestCmpCenterInfinite: a centre whose interval is infinite (too few samples) prints ±?, not
// "±+Inf%", "±NaN%" or an infinity (the row's warning gives the reason).
func TestCmpCenterInfinite(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{math.Inf(-1), math.Inf(1), " ±?"},
		{9, math.Inf(1), " ±?"},
		{math.NaN(), 11, " ±?"},
		{9, 11, " ±10%"},
	} {
		if got := cmpCenter(10, tc.lo, tc.hi, true); got != num(10)+tc.want {
			t.Errorf("cmpCenter(10, %v, %v) = %q, want %q", tc.lo, tc.hi, got, num(10)+tc.want)
		}
	}
}
