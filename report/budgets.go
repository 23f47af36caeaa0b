package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/stats"
)

// This file holds the budget lines of a comparison's text: the checks of a run compared with
// nothing (BudgetsText), and a line per budget exceeded or not measured.

// BudgetsText writes the budget checks of a run that was compared with nothing: one line with the
// counts, then a line per budget exceeded or not measured.
func BudgetsText(w io.Writer, rep *compare.Report) error {
	if _, err := fmt.Fprintf(w, "budgets: %d checked, %d exceeded\n", len(rep.Budgets), rep.BudgetsExceeded); err != nil {
		return err
	}
	for _, l := range budgetNotes(rep) {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}

// budgetNotes has a line per budget exceeded or not measured.
func budgetNotes(rep *compare.Report) []string {
	var lines []string
	for _, b := range rep.Budgets {
		switch {
		case !b.Measured && !b.OK:
			lines = append(lines, fmt.Sprintf("BUDGET INVALID %s/%s %s: %q is not an operator and a number", b.Benchmark, b.Scenario, b.Metric, b.Op))
		case !b.Measured && b.Against == "" && strings.HasPrefix(b.Metric, "ratio("):
			lines = append(lines, fmt.Sprintf("budget  %s/%s %s %s %s: not measured (no pair of scenarios matches)", b.Benchmark, b.Scenario, b.Metric, b.Op, num(b.Limit)))
		case !b.Measured:
			lines = append(lines, fmt.Sprintf("warning: budget %s/%s %s %s %s (%s) not measured, so not checked: %s", b.Benchmark, b.Scenario, b.Metric, b.Op, num(b.Limit), b.Source, notMeasuredHint(b.Metric)))
		case !b.OK && b.Against != "":
			lines = append(lines, fmt.Sprintf("BUDGET EXCEEDED %s/%s ÷ %s %s = %s%s, budget %s %s (%s)", b.Benchmark, b.Scenario, b.Against, b.Metric, num(b.Actual), ciText(b.CI), b.Op, num(b.Limit), b.Source))
		case !b.OK:
			lines = append(lines, fmt.Sprintf("BUDGET EXCEEDED %s/%s %s = %s, budget %s %s (%s)", b.Benchmark, b.Scenario, b.Metric, num(b.Actual), b.Op, num(b.Limit), b.Source))
		}
	}
	return lines
}

// notMeasuredHint says why a budget's metric may be missing from a scenario.
func notMeasuredHint(metric string) string {
	name, _, _ := strings.Cut(metric, ".")
	switch {
	case name == "memory_mb":
		return "the subject reports no memory_mb, and the resource monitors' peak_rss_mb is missing too (--no-monitor, or they could not sample here)"
	case name == "cpu_pct" || name == "cpu_s" || strings.HasPrefix(name, "rss_") || name == "peak_rss_mb" ||
		strings.HasPrefix(name, "gpu_") || strings.HasPrefix(name, "io_"):
		return "the resource monitors measure " + name + ": the run had none (--no-monitor) or they could not sample here"
	}
	return "the scenario has no metric " + name
}

func ciText(ci *stats.Interval) string {
	if ci == nil {
		return ""
	}
	return fmt.Sprintf(" (95%% CI %s–%s)", num(ci.Lo), num(ci.Hi))
}
