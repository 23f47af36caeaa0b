package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/stats"
)

// compareFormats are the renderings of a comparison.
var compareFormats = []string{"text", "markdown", "json", "junit"}

// Comparison renders a comparison in one of CompareFormats.
func Comparison(w io.Writer, rep *compare.Report, format string) error {
	switch format {
	case "text", "":
		return CompareText(w, rep)
	case "text-all":
		return CompareTextAll(w, rep)
	case "markdown", "md":
		return CompareMarkdown(w, rep)
	case "json":
		enc := finite.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case "junit":
		return compareJUnit(w, rep)
	}
	return fmt.Errorf("format %q: want one of %s", format, strings.Join(compareFormats, ", "))
}

func cmpRef(r compare.RunRef) string {
	s := r.ID
	if r.Label != "" && r.Label != r.ID {
		s = r.Label + " (" + r.ID + ")"
	}
	if r.Commit != "" {
		c := r.Commit
		if len(c) > 10 {
			c = c[:10]
		}
		s += " @ " + c
	}
	return s
}

func cmpCenter(v float64, lo, hi float64, ok bool) string {
	s := num(v)
	if ok && v != 0 {
		pct := 100 * math.Max(hi-v, v-lo) / math.Abs(v)
		if math.IsInf(pct, 0) || math.IsNaN(pct) { // too few samples for a finite interval: the row's warning says so
			return s + " ±?"
		}
		s += fmt.Sprintf(" ±%.0f%%", math.Ceil(pct))
	}
	return s
}

// cmpDelta is the delta column: "~" when not significant, like benchstat, with the test.
func cmpDelta(r *compare.Row) string {
	test := ""
	switch {
	case r.Method == compare.CountMethod:
		if !r.Significant {
			return fmt.Sprintf("~ (exact count, n=%d+%d)", r.OldN, r.NewN)
		}
		test = fmt.Sprintf("(exact count, n=%d+%d)", r.OldN, r.NewN)
	case math.IsNaN(r.P):
		test = fmt.Sprintf("(no test, n=%d+%d)", r.OldN, r.NewN)
	case r.OldN == r.NewN:
		test = fmt.Sprintf("(p=%.3f n=%d)", r.Q, r.OldN)
	default:
		test = fmt.Sprintf("(p=%.3f n=%d+%d)", r.Q, r.OldN, r.NewN)
	}
	pct, ok, why := r.Change()
	switch {
	case !ok:
		return "? " + test + " " + why
	case !math.IsNaN(r.P) && !r.Significant:
		return "~ " + test
	}
	return fmt.Sprintf("%+.2f%% %s", pct, test)
}

func cmpVerdict(r *compare.Row) string {
	v := ""
	switch r.Verdict {
	case compare.Regression:
		if u := r.Uncertified(); u != "" {
			return fmt.Sprintf("REGRESSION (limit %s), %s", cmpLimit(r), u)
		}
		return fmt.Sprintf("REGRESSION (limit %s)", cmpLimit(r))
	case compare.Unverified:
		return fmt.Sprintf("worse beyond limit, untested (%s)", cmpLimit(r))
	case compare.Info:
		return fmt.Sprintf("info: beyond limit (%s), not gated", cmpLimit(r))
	case compare.Changed:
		return "changed (direction unknown: not gated)"
	case compare.Disagree:
		return "wall time and CPU time disagree: the machine moved, not the code"
	case compare.Incomparable:
		return "not compared (counted under another valgrind, CPU or interpreter)"
	case compare.Unknown:
		if r.Unresolved() && r.Improved() {
			return fmt.Sprintf("unknown between sessions: better beyond the threshold (%s; %d of %d stored sessions), not an improvement", pctText(r.Threshold), r.Sessions.Runs, r.Sessions.Need)
		}
		if r.Unresolved() {
			return fmt.Sprintf("unknown between sessions (limit %s; %d of %d stored sessions)", cmpLimit(r), r.Sessions.Runs, r.Sessions.Need)
		}
	case compare.Improvement:
		v = "improvement"
	case compare.Worse:
		v = "worse, within limit"
	case compare.Better:
		v = "better"
	}
	if r.ThresholdRuns > 0 { // the verdict row says where its threshold came from
		if v != "" {
			v += "; "
		}
		v += fmt.Sprintf("threshold %s from %d runs", pctText(r.Threshold), r.ThresholdRuns)
	}
	return v
}

// cmpLimit is a row's threshold as a signed limit, "+15%", and where a noise-aware threshold came
// from: "+7.4%: threshold 7.4% from 12 runs".
func cmpLimit(r *compare.Row) string {
	s := cmpSign(r) + pctText(r.Threshold)
	if r.ThresholdRuns > 0 {
		s += fmt.Sprintf(": threshold %s from %d runs", pctText(r.Threshold), r.ThresholdRuns)
	}
	return s
}

// pctText writes a percentage with a tenth where it has one: "15%", "7.4%".
func pctText(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + "%" }

// cmpBetter is the direction column: which way the metric improves, "?" when unknown.
func cmpBetter(r *compare.Row) string {
	switch r.Better {
	case "higher", "lower":
		return r.Better
	}
	return "?"
}

func cmpSign(r *compare.Row) string {
	if r.Better == "higher" {
		return "-"
	}
	return "+"
}

// CompareText writes a benchstat-like table of the primary metrics (compare.Row.Primary) and of
// any other row that fails or is beyond its threshold untested: per scenario and metric the
// direction that is better, the old and new centers (median ± the half-width of its 95%
// interval), the delta with the p-value (adjusted for the number of tests) or "~" when not
// significant, and the verdict; then regressions, budgets and warnings. CompareTextAll shows
// every row.
func CompareText(w io.Writer, rep *compare.Report) error { return compareText(w, rep, false) }

// CompareTextAll is CompareText with every metric's rows.
func CompareTextAll(w io.Writer, rep *compare.Report) error { return compareText(w, rep, true) }

func compareText(w io.Writer, rep *compare.Report, all bool) error {
	if rep.Unverified > 0 || rep.Unknown > 0 || len(rep.Certificates) > 0 {
		fmt.Fprintf(w, "%s\n\n", headlineOf(rep))
	}
	fmt.Fprintf(w, "old: %s\nnew: %s\n\n", cmpRef(rep.Old), cmpRef(rep.New))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tMETRIC\tBETTER\tOLD\tNEW\tDELTA\tVERDICT\t")
	prev := ""
	hidden := 0
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if !all && !r.Primary && !r.Gated && r.Verdict != compare.Regression && r.Verdict != compare.Unverified && r.Verdict != compare.Info {
			hidden++
			continue
		}
		id := r.ID()
		if id == prev {
			id = ""
		} else {
			prev = id
		}
		metric := r.Metric
		if r.Unit != "" {
			metric += " (" + r.Unit + ")"
		}
		ol, oh, ook := ciOf(r.OldCI)
		nl, nh, nok := ciOf(r.NewCI)
		old := cmpCenter(r.Old, ol, oh, ook)
		nw := cmpCenter(r.New, nl, nh, nok)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", id, metric, cmpBetter(r), old, nw, cmpDelta(r), cmpVerdict(r))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if hidden > 0 {
		fmt.Fprintf(w, "(%d rows of secondary metrics, none failing, not shown: --all-metrics shows them)\n", hidden)
	}
	cmpNotes(w, rep)
	return cmpSummaryLine(w, rep)
}

func ciOf(ci *stats.Interval) (float64, float64, bool) {
	if ci == nil {
		return 0, 0, false
	}
	return ci.Lo, ci.Hi, true
}

func cmpNotes(w io.Writer, rep *compare.Report) {
	var notes []string
	for i := range rep.Rows {
		r := &rep.Rows[i]
		for _, warn := range r.Warnings {
			notes = append(notes, fmt.Sprintf("warning %s %s: %s", r.ID(), r.Metric, warn))
		}
	}
	notes = append(notes, budgetNotes(rep)...)
	for _, s := range rep.OnlyOld {
		notes = append(notes, "only in old: "+s)
	}
	for _, s := range rep.OnlyNew {
		notes = append(notes, "only in new: "+s)
	}
	for _, warn := range rep.Warnings {
		notes = append(notes, "warning "+warn)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
}

func cmpTests(rep *compare.Report) int {
	n := 0
	for i := range rep.Rows {
		if !math.IsNaN(rep.Rows[i].P) {
			n++
		}
	}
	return n
}

// gatedNames lists the metrics whose rows can fail the comparison ("latency_ms, ttft_ms"), tail
// rows folded into their metric; "none" when no row is gated.
func gatedNames(rep *compare.Report) string {
	var names []string
	for i := range rep.Rows {
		if r := &rep.Rows[i]; r.Gated {
			base, _, _ := strings.Cut(r.Metric, ".")
			if !slices.Contains(names, base) {
				names = append(names, base)
			}
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// headlineOf is the verdict in one line: "FAIL: ..." with what failed it, "UNTESTED: ..." when a
// gated change beyond its threshold could not be tested (one value a side: no test can tell it
// from noise) and nothing failed, else "ok: ...". Every rendering of a comparison leads with it,
// so that an untested 10x change is never a quiet "ok".
func headlineOf(rep *compare.Report) string {
	h := verdictOf(rep)
	if len(rep.Certificates) > 0 {
		h += "; " + certificatesNote(rep)
	}
	return h
}

// statusWord is the comparison's standing in one word, as the text summary and the HTML page
// show it: "FAIL" (Report.Failed), "UNKNOWN" (changes two sessions cannot tell), "UNTESTED"
// (gated single values beyond their threshold) or "ok".
func statusWord(rep *compare.Report) string {
	switch {
	case rep.Failed():
		return "FAIL"
	case rep.Unknown > 0:
		return "UNKNOWN"
	case rep.Unverified > 0:
		return "UNTESTED"
	}
	return "ok"
}

// verdictOf is headlineOf's verdict, before the certificates' note.
func verdictOf(rep *compare.Report) string {
	switch {
	case rep.NoEvidence != "":
		return "FAIL: nothing comparable: " + rep.NoEvidence
	case rep.Failed():
		return "FAIL: " + Outcome(rep)
	case rep.Unknown > 0:
		return "UNKNOWN: " + rep.Unresolved
	case rep.Unverified > 0:
		return fmt.Sprintf("UNTESTED: %d gated change(s) beyond threshold could not be tested (a single value a side): "+
			"the verdict cannot tell them from noise; measure more iterations, or --strict to fail on them", rep.Unverified)
	}
	return "ok: no regression, no budget exceeded"
}

// Outcome is what fails a comparison, for the text of its exit status: "2 regressions, 0 budgets
// exceeded", with ", 1 untested changes beyond threshold (--strict)" when Strict (or a
// definition's `strict: true`) fails it on those.
func Outcome(rep *compare.Report) string {
	s := fmt.Sprintf("%d regressions, %d budgets exceeded", rep.Regressions, rep.BudgetsExceeded)
	if n, why := strictFailures(rep); n > 0 {
		s += fmt.Sprintf(", %d untested changes beyond threshold (%s)", n, why)
	}
	if rep.Strict && rep.Unknown > 0 {
		s += fmt.Sprintf(", %d unknown changes (--strict): %s", rep.Unknown, rep.Unresolved)
	}
	return s
}

// strictFailures returns how many untested changes fail the comparison and what makes them
// fail: --strict, or the definitions of their scenarios.
func strictFailures(rep *compare.Report) (int, string) {
	switch {
	case rep.Strict && rep.Unverified > 0:
		return rep.Unverified, "--strict"
	case rep.StrictUnverified > 0:
		return rep.StrictUnverified, "strict: in the definition"
	}
	return 0, ""
}

func cmpSummaryLine(w io.Writer, rep *compare.Report) error {
	if rep.NoEvidence != "" {
		_, err := fmt.Fprintf(w, "\nFAIL: nothing comparable: %s\n", rep.NoEvidence)
		return err
	}
	verdict := statusWord(rep)
	if len(rep.Rows) > 0 {
		fmt.Fprintf(w, "\ngated: %s (each scenario's primary metrics, the figures its code reports and --gate); the other metrics are information\n", gatedNames(rep))
	}
	level := fmt.Sprintf("false discovery rate %.0f%% over %d tests, Benjamini-Hochberg", 100*rep.Alpha, cmpTests(rep))
	switch rep.Correction {
	case "":
	case compare.Uncorrected:
		level = fmt.Sprintf("each of %d tests at %.0f%%, uncorrected as benchstat: --uncorrected", cmpTests(rep), 100*rep.Alpha)
	default:
		level = fmt.Sprintf("false failures at most %.2g%%, %s", 100*rep.Alpha, rep.Correction)
	}
	unknown := ""
	if rep.Unknown > 0 {
		unknown = fmt.Sprintf(", %d unknown", rep.Unknown)
	}
	_, err := fmt.Fprintf(w, "\n%s: %d regressions, %d improvements, %d budgets exceeded, %d untested changes%s, %d beyond threshold not gated (%d metrics; %s)\n",
		verdict, rep.Regressions, rep.Improvements, rep.BudgetsExceeded, rep.Unverified, unknown, rep.Info, len(rep.Rows), level)
	return err
}

// cmpColumns are the markdown table's columns: the first metric of each list a scenario has.
var cmpColumns = []struct {
	title   string
	metrics []string
	kind    compare.Kind
}{
	{"Latency (median)", []string{"latency_ms", "e2e_ms", "ttft_ms"}, ""},
	{"Peak memory", []string{"memory_mb", "peak_rss_mb", "gpu_memory_mb"}, ""},
	{"CPU", nil, compare.CPU},
	{"Throughput", []string{"throughput_ips", "requests_per_s", "output_tokens_per_s"}, ""},
}

// CompareMarkdown writes a comparison for a pull-request comment or a GitHub step summary: the
// status, a table of latency, peak memory, CPU and throughput per scenario, then the regressions,
// the exceeded budgets and the warnings.
func CompareMarkdown(w io.Writer, rep *compare.Report) error {
	status := cmpStatus(rep)
	fmt.Fprintf(w, "### inferbench: %s\n\n", status)
	certificatesMarkdown(w, rep)
	fmt.Fprintf(w, "`%s` compared with `%s`. A change counts when it is significant (false discovery rate %.0f%%, %d tests) **and** beyond its threshold, on a gated metric (%s).\n\n",
		md(cmpRef(rep.New)), md(cmpRef(rep.Old)), 100*rep.Alpha, cmpTests(rep), md(gatedNames(rep)))
	if len(rep.Rows) > 0 {
		cmpTable(w, rep)
	}
	var regs []string
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if r.Failed() {
			line := fmt.Sprintf("- **%s** `%s`: %s → %s %s (%s; limit %s)", md(r.ID()), r.Metric, num(r.Old), num(r.New), r.Unit, strings.TrimSpace(cmpDelta(r)), cmpLimit(r))
			if u := r.Uncertified(); u != "" {
				line += ", **" + md(u) + "**"
			}
			regs = append(regs, line)
		}
	}
	if len(regs) > 0 {
		fmt.Fprintf(w, "#### Regressions\n\n%s\n\n", strings.Join(regs, "\n"))
	}
	var infos []string
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if m := r.Mark(); m == "info" || m == "untested" {
			why := "not gated"
			if m == "untested" {
				why = "a single value: untested"
			}
			infos = append(infos, fmt.Sprintf("- ℹ️ %s `%s`: %s → %s %s (%s; limit %s, %s)", md(r.ID()), r.Metric, num(r.Old), num(r.New), r.Unit, strings.TrimSpace(cmpDelta(r)), cmpLimit(r), why))
		}
	}
	if len(infos) > 0 {
		fmt.Fprintf(w, "<details><summary>%d change(s) beyond the threshold that do not fail (information; --gate METRIC to fail on one)</summary>\n\n%s\n\n</details>\n\n", len(infos), strings.Join(infos, "\n"))
	}
	var budgets []string
	for _, b := range rep.Budgets {
		if !b.OK {
			budgets = append(budgets, fmt.Sprintf("- **%s/%s** `%s` = %s, budget %s %s (%s)", md(b.Benchmark), md(b.Scenario), b.Metric, num(b.Actual), b.Op, num(b.Limit), b.Source))
		}
	}
	if len(budgets) > 0 {
		fmt.Fprintf(w, "#### Budgets exceeded\n\n%s\n\n", strings.Join(budgets, "\n"))
	}
	var warns []string
	warns = append(warns, rep.Warnings...)
	for _, s := range rep.OnlyOld {
		warns = append(warns, "only in old: "+s)
	}
	for _, s := range rep.OnlyNew {
		warns = append(warns, "only in new: "+s)
	}
	for i := range rep.Rows {
		for _, wr := range rep.Rows[i].Warnings {
			warns = append(warns, rep.Rows[i].ID()+" "+rep.Rows[i].Metric+": "+wr)
		}
	}
	if len(warns) > 0 {
		fmt.Fprintf(w, "<details><summary>%d warning(s)</summary>\n\n", len(warns))
		for _, wr := range warns {
			fmt.Fprintf(w, "- %s\n", md(wr))
		}
		fmt.Fprint(w, "\n</details>\n")
	}
	return nil
}

// cmpStatus is the comparison's status line in Markdown: no regression, what failed it, or the
// gated changes left untested.
func cmpStatus(rep *compare.Report) string {
	status := "✅ no regression"
	if rep.Failed() {
		var parts []string
		if rep.Regressions > 0 {
			parts = append(parts, fmt.Sprintf("%d regression(s)", rep.Regressions))
		}
		if rep.BudgetsExceeded > 0 {
			parts = append(parts, fmt.Sprintf("%d budget(s) exceeded", rep.BudgetsExceeded))
		}
		if rep.NoEvidence != "" {
			parts = append(parts, "nothing comparable: "+rep.NoEvidence)
		}
		if n, why := strictFailures(rep); n > 0 {
			parts = append(parts, fmt.Sprintf("%d untested change(s) beyond threshold (%s)", n, why))
		}
		if rep.Strict && rep.Unknown > 0 {
			parts = append(parts, fmt.Sprintf("%d unknown change(s) (--strict)", rep.Unknown))
		}
		status = "❌ " + strings.Join(parts, ", ")
	} else if rep.Unknown > 0 {
		status = "❔ " + rep.Unresolved
	} else if rep.Unverified > 0 {
		status = fmt.Sprintf("⚠️ %d gated change(s) beyond threshold untested (a single value a side; --strict fails on them)", rep.Unverified)
	}
	return status
}

// cmpTable writes the Markdown table of the comparison: a scenario a row, with its status and
// its row of each of cmpColumns.
func cmpTable(w io.Writer, rep *compare.Report) {
	fmt.Fprintln(w, "| Scenario | Status | Latency (median) | Peak memory | CPU | Throughput |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	byID := map[string][]*compare.Row{}
	var order []string
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if _, ok := byID[r.ID()]; !ok {
			order = append(order, r.ID())
		}
		byID[r.ID()] = append(byID[r.ID()], r)
	}
	failedBudget := map[string]bool{}
	for _, b := range rep.Budgets {
		if !b.OK {
			failedBudget[b.Benchmark+"/"+b.Scenario] = true
		}
	}
	for _, id := range order {
		rows := byID[id]
		st := "✅"
		for _, r := range rows {
			if r.Failed() {
				st = "❌"
			}
		}
		if failedBudget[id] {
			st = "❌"
		}
		cells := []string{md(id), st}
		for _, col := range cmpColumns {
			cells = append(cells, mdCell(pickRow(rows, col.metrics, col.kind)))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
}

func pickRow(rows []*compare.Row, metrics []string, kind compare.Kind) *compare.Row {
	for _, m := range metrics {
		for _, r := range rows {
			if r.Metric == m {
				return r
			}
		}
	}
	if kind != "" {
		for _, r := range rows {
			if r.Kind == kind && !strings.Contains(r.Metric, ".") {
				return r
			}
		}
	}
	return nil
}

func mdCell(r *compare.Row) string {
	if r == nil {
		return "–"
	}
	d := "~"
	pct, ok, why := r.Change()
	switch {
	case !ok:
		d = "? " + why
	case math.IsNaN(r.P) || r.Significant:
		d = fmt.Sprintf("%+.1f%%", pct)
	}
	mark := ""
	switch r.Mark() {
	case "fail":
		mark = " ❌"
	case "info", "untested":
		mark = " ℹ️"
	case "unknown":
		mark = " ❔"
	}
	return fmt.Sprintf("%s → %s %s (%s)%s", num(r.Old), num(r.New), r.Unit, d, mark)
}

// md escapes the characters that break a markdown table cell.
func md(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}
