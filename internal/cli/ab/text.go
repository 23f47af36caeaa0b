package ab

import (
	"fmt"
	"io"
	"strings"

	"github.com/inferbench/inferbench/compare"
)

// WriteText writes the A/B's outcome for a terminal or a CI log: the variants, the design, each
// side's median, the ratio B/A with its interval and p-value, and the verdict.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "A: %s\nB: %s\n", r.A, r.B)
	better := r.Better
	if better == "" {
		better = "unknown: declare it"
	}
	unit := r.Unit
	calls, failed := 0, 0
	for _, bl := range r.Blocks {
		calls += bl.N
		failed += bl.Failed
	}
	fmt.Fprintf(&b, "%d pairs of blocks in ABBA order, %d measured calls; %s (%s, better: %s), block medians\n", r.Pairs, calls, r.Metric, orDash(unit), better)
	fmt.Fprintf(&b, "median A %s %s, median B %s %s\n", num(r.MedianA), unit, num(r.MedianB), unit)
	p := fmt.Sprintf("p = %.3g", r.P)
	if r.P < 1e-4 {
		p = "p < 0.0001"
	}
	fmt.Fprintf(&b, "B/A = %.4f (%.4g%% CI %.4f – %.4f), %+.2f%%, %s (%s)\n",
		r.Ratio, 100*r.CI.Confidence, r.CI.Lo, r.CI.Hi, 100*(r.Ratio-1), p, r.Method)
	fmt.Fprintf(&b, "answer: %s\n", r.answerLine())
	fmt.Fprintf(&b, "verdict: %s\n", verdictText(r))
	for _, wn := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func verdictText(r *Result) string {
	limit := fmt.Sprintf("%.0f%%", r.Threshold)
	switch r.Verdict {
	case compare.Regression:
		return fmt.Sprintf("REGRESSION: B is worse than A beyond the %s threshold", limit)
	case compare.Worse:
		return fmt.Sprintf("B is worse than A, within the %s threshold", limit)
	case compare.Improvement:
		return fmt.Sprintf("improvement: B is better than A beyond %s", limit)
	case compare.Better:
		return fmt.Sprintf("B is better than A, within %s", limit)
	case compare.Changed:
		return "B differs from A (direction unknown: not gated)"
	case compare.Unknown:
		return fmt.Sprintf("unknown: neither beyond nor within the %s threshold yet (--strict fails it)", limit)
	case compare.Unchanged:
		return fmt.Sprintf("the same, within the %s threshold", limit)
	}
	return fmt.Sprintf("no significant difference at alpha %.2g (~)", r.Alpha)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func num(v float64) string { return fmt.Sprintf("%.4g", v) }
