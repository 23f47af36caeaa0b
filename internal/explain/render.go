package explain

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
)

// Pairs returns the scenarios of a comparison to explain: each scenario with a failing row
// (a regression of a gated metric), with the first such row's metric and change; with all, every
// scenario of both runs, with its first primary row's.
func Pairs(old, nw *result.Run, rep *compare.Report, all bool) []Pair {
	olds := map[string]*result.Scenario{}
	for i := range old.Scenarios {
		olds[compare.Key(&old.Scenarios[i])] = &old.Scenarios[i]
	}
	var pairs []Pair
	for i := range nw.Scenarios {
		n := &nw.Scenarios[i]
		o := olds[compare.Key(n)]
		if o == nil {
			continue
		}
		var row *compare.Row
		for j := range rep.Rows {
			r := &rep.Rows[j]
			if r.Benchmark != n.Benchmark || r.Scenario != n.Scenario {
				continue
			}
			if r.Failed() {
				row = r
				break
			}
			if all && r.Gated && (row == nil || !row.Gated) {
				row = r // a gated metric's change heads the explanation
			}
			if all && row == nil && r.Primary {
				row = r
			}
		}
		if row == nil {
			continue
		}
		pairs = append(pairs, Pair{Old: o, New: n, Metric: row.Metric, DeltaPct: row.Delta})
	}
	return pairs
}

// formats are the renderings of explanations.
var formats = []string{"text", "markdown", "json"}

// Render writes explanations (Runs) in one of formats: text, markdown or json.
func Render(w io.Writer, xs []Scenario, format string) error {
	switch format {
	case "text", "":
		return Text(w, xs)
	case "markdown", "md":
		return Markdown(w, xs)
	case "json":
		for i := range xs { // the picture is report.html's; JSON keeps the numbers
			if xs[i].Explanation != nil {
				x := *xs[i].Explanation
				x.Flame = nil
				xs[i].Explanation = &x
			}
		}
		enc := finite.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Scenarios []Scenario `json:"scenarios"`
		}{xs})
	}
	return fmt.Errorf("format %q: want one of %s", format, strings.Join(formats, ", "))
}

// Text writes each scenario's headline, then its named entries (old → new per call, self
// and inclusive, the share of the change and the adjusted p-value), the entries added and
// removed, and what was compared.
func Text(w io.Writer, xs []Scenario) error {
	fmt.Fprintln(w, "explain: the functions and operators whose cost per call changed (docs/explain.md)")
	for i := range xs {
		s := &xs[i]
		fmt.Fprintf(w, "%s/%s: %s\n", s.Benchmark, s.Scenario, s.Headline())
		if s.Explanation == nil {
			continue
		}
		if err := textEntries(w, s.Explanation); err != nil {
			return err
		}
		if s.Python != nil {
			fmt.Fprintln(w, "  the Python code between the operators:")
			if err := textEntries(w, s.Python); err != nil {
				return err
			}
		}
	}
	return nil
}

// textEntries writes x's named, added and removed entries, what was compared and its warnings.
func textEntries(w io.Writer, x *Explanation) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(x.Named) > 0 {
		fmt.Fprintln(tw, "  \tENTRY\tSELF PER CALL\tINCLUSIVE PER CALL\tCALLS PER CALL\tSHARE\tQ\t")
		for _, e := range x.Named {
			fmt.Fprintf(tw, "  \t%s\t%s\t%s\t%s\t%s\t%s\t\n", e.Name, arrow(e.OldSelf, e.NewSelf, x.Unit), arrow(e.OldIncl, e.NewIncl, x.Unit), counts(e), pct(e.Share), qText(e.Q, x.Exact && !e.Varies))
		}
	}
	for _, e := range x.Added {
		fmt.Fprintf(tw, "  \tadded: %s\t%s\t%s\t\t\t\t\n", e.Name, FormatCost(e.NewSelf, x.Unit), FormatCost(e.NewIncl, x.Unit))
	}
	for _, e := range x.Removed {
		fmt.Fprintf(tw, "  \tremoved: %s\t%s\t%s\t\t\t\t\n", e.Name, FormatCost(e.OldSelf, x.Unit), FormatCost(e.OldIncl, x.Unit))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "  (%s)\n", compared(x))
	for _, warn := range x.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	return nil
}

// Markdown writes the explanations for a PR comment: a headline per scenario, its table in
// a details block.
func Markdown(w io.Writer, xs []Scenario) error {
	fmt.Fprintln(w, "\n### Why: the functions and operators whose cost per call changed")
	fmt.Fprintln(w)
	for i := range xs {
		s := &xs[i]
		fmt.Fprintf(w, "- **%s/%s**: %s\n", mdEscape(s.Benchmark), mdEscape(s.Scenario), s.Headline())
		mdEntries(w, s.Explanation, "")
		mdEntries(w, s.Python, "the Python code between the operators: ")
	}
	return nil
}

// mdEntries writes x's entries in a details block, its summary led by what (nothing for a nil x
// or one without entries).
func mdEntries(w io.Writer, x *Explanation, what string) {
	if x == nil || len(x.Named)+len(x.Added)+len(x.Removed) == 0 {
		return
	}
	fmt.Fprintf(w, "\n  <details><summary>%s%d named, %d added, %d removed (%s)</summary>\n\n", what, len(x.Named), len(x.Added), len(x.Removed), compared(x))
	fmt.Fprintln(w, "  | entry | self per call | inclusive per call | share | q |")
	fmt.Fprintln(w, "  |---|---|---|---|---|")
	for _, e := range x.Named {
		fmt.Fprintf(w, "  | %s | %s | %s | %s | %s |\n", mdEscape(QuoteName(e.Name)), arrow(e.OldSelf, e.NewSelf, x.Unit), arrow(e.OldIncl, e.NewIncl, x.Unit), pct(e.Share), qText(e.Q, x.Exact && !e.Varies))
	}
	for _, e := range x.Added {
		fmt.Fprintf(w, "  | added: %s | %s | %s | | |\n", mdEscape(QuoteName(e.Name)), FormatCost(e.NewSelf, x.Unit), FormatCost(e.NewIncl, x.Unit))
	}
	for _, e := range x.Removed {
		fmt.Fprintf(w, "  | removed: %s | %s | %s | | |\n", mdEscape(QuoteName(e.Name)), FormatCost(e.OldSelf, x.Unit), FormatCost(e.OldIncl, x.Unit))
	}
	fmt.Fprintln(w, "\n  </details>")
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func arrow(old, nw float64, unit string) string {
	return FormatCost(old, unit) + " → " + FormatCost(nw, unit)
}

func counts(e Entry) string {
	if e.OldCount == 0 && e.NewCount == 0 {
		return ""
	}
	return trimNum(e.OldCount) + " → " + trimNum(e.NewCount)
}

func trimNum(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func pct(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }

func qText(q float64, exact bool) string {
	switch {
	case exact:
		return "exact"
	case q < 0.001:
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", q)
}

// compared says what was compared: the profiler, the chunks, the entries tested, the totals.
func compared(x *Explanation) string {
	what := map[string]string{SourceGo: "Go CPU profile", SourcePython: "cProfile", SourceTorch: "torch.profiler", SourceCallgrind: "callgrind", SourceOperators: "callgrind per torch operator", SourceBytecode: "Python bytecode counts"}[x.Source]
	if what == "" {
		what = x.Source
	}
	test := fmt.Sprintf("Welch over chunks, Benjamini-Hochberg at %g", x.Alpha)
	if x.Exact {
		test = "exact counts"
		if x.Varied > 0 {
			test = fmt.Sprintf("exact counts; %d entries varied between a run's chunks, tested (Welch, Benjamini-Hochberg at %g)", x.Varied, x.Alpha)
		}
	}
	return fmt.Sprintf("%s, %d and %d chunks, %d entries, %s; profiled %s → %s per call", what, x.OldChunks, x.NewChunks, x.Tested, test, FormatCost(x.OldTotal, x.Unit), FormatCost(x.NewTotal, x.Unit))
}

// StepSummary appends the markdown comparison to $GITHUB_STEP_SUMMARY when lookup finds it set,
// with the explanation of the regressed scenarios (explained; nil for none) below it, as in the
// PR comment.
func StepSummary(lookup func(string) (string, bool), rep *compare.Report, explained []Scenario) error {
	path, ok := lookup("GITHUB_STEP_SUMMARY")
	if !ok || path == "" {
		return nil
	}
	var buf bytes.Buffer
	if err := report.CompareMarkdown(&buf, rep); err != nil {
		return err
	}
	if len(explained) > 0 {
		if err := Markdown(&buf, explained); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
