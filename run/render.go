package run

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/inferbench/inferbench/alert"
	"github.com/inferbench/inferbench/internal/base/atomicfile"
	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/internal/explain"
	"github.com/inferbench/inferbench/internal/stage/recovery"
	"github.com/inferbench/inferbench/internal/stage/sample"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
)

// adviceFile is the file the render stage adds to a run folder when there is advice, beside
// recovery.ReportFile, CompareJSONFile and CompareMarkdownFile.
const adviceFile = "advice.json"

// render writes the summary (Format), the verdict, the advice and the overhead table to Stdout
// (to Stderr after the JSON of Format "json", so that Stdout holds one JSON document);
// compare.json, compare.md, advice.json and report.html into the run folder; the comparison to
// $GITHUB_STEP_SUMMARY; and posts the alerts that fired.
func (p *pipeline) render(ctx context.Context, dir string, r *result.Run, v *Verdict, overhead []sample.OverheadRow) {
	out := p.o.Stdout
	var explained []explain.Scenario // the regressions against the baseline, explained
	switch p.o.Format {
	case "text":
		if err := report.Table(out, r); err != nil {
			p.errs = append(p.errs, err)
		}
		if p.alt != "" {
			fmt.Fprintf(out, "results: %s (the run folder %s could not take them all)\n", p.alt, dir)
		} else {
			fmt.Fprintf(out, "results: %s\n", dir)
		}
	case "json":
		if err := result.WriteJSON(out, r); err != nil {
			p.errs = append(p.errs, err)
		}
		out = p.o.Stderr // stdout holds the run alone, for the program reading it
	}
	compared := v.BaselineRun != nil || v.Against != ""
	if rep := v.Compare; compared || len(rep.Budgets) > 0 {
		fmt.Fprintln(out)
		render := report.BudgetsText
		switch {
		case v.BaselineRun != nil:
			fmt.Fprintf(out, "compared with baseline %s:\n", v.Baseline)
			render = report.CompareText
		case v.Against != "":
			fmt.Fprintf(out, "compared with %s:\n", v.Against)
			render = report.CompareText
		}
		if err := render(out, rep); err != nil {
			p.errs = append(p.errs, err)
		}
		xs := explainBaseline(dir, r, v)
		explained = xs
		if len(xs) > 0 {
			fmt.Fprintln(out)
			_ = explain.Text(out, xs)
		}
		var js, md bytes.Buffer
		enc := finite.NewEncoder(&js)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
		_ = report.CompareMarkdown(&md, rep)
		if len(xs) > 0 {
			_ = explain.Markdown(&md, xs)
		}
		files := map[string][]byte{recovery.CompareJSONFile: js.Bytes()}
		if compared { // budgets alone compare with nothing: no "compared with -" page
			files[recovery.CompareMarkdownFile] = md.Bytes()
		}
		for name, data := range files {
			if err := atomicfile.WriteFile(filepath.Join(dir, name), data); err != nil {
				fmt.Fprintln(p.o.Stderr, "inferbench:", err)
			}
		}
		if err := explain.StepSummary(p.env.Lookup, rep, xs); err != nil {
			fmt.Fprintln(p.o.Stderr, "inferbench: GITHUB_STEP_SUMMARY:", err)
		}
	}
	if len(v.Advice) > 0 {
		fmt.Fprintln(out)
		for _, t := range v.Advice {
			fmt.Fprintf(out, "advice  %s (%s): %s\n", t.Scenario, t.Rule, t.Text)
		}
		if data, err := finite.MarshalIndent(v.Advice, "", "  "); err == nil {
			_ = atomicfile.WriteFile(filepath.Join(dir, adviceFile), append(data, '\n'))
		}
	}
	p.postAlerts(ctx, r, v)
	if overhead != nil {
		sample.WriteOverhead(out, overhead)
	}
	wroteReport := false
	if !p.o.NoHTMLReport {
		var buf bytes.Buffer
		section, err := explain.HTML(explained)
		if err == nil {
			err = report.RunHTML(&buf, r, report.HTMLOptions{Explain: section})
		}
		if err != nil {
			p.errs = append(p.errs, fmt.Errorf("html report: %w", err))
		} else if err := atomicfile.WriteFile(filepath.Join(dir, recovery.ReportFile), buf.Bytes()); err != nil {
			p.errs = append(p.errs, fmt.Errorf("write %s: %w", filepath.Join(dir, recovery.ReportFile), err))
		} else {
			wroteReport = true
		}
	}
	if p.o.Format == "text" {
		nextSteps(out, dir, wroteReport, p.o.NoStore)
	}
}

// nextSteps ends a run's summary with three things to try: the report, the dashboard of the
// stored runs, and what the frameworks will run with here.
func nextSteps(w io.Writer, dir string, report, noStore bool) {
	var steps [][2]string
	if report {
		steps = append(steps, [2]string{"open " + filepath.Join(dir, recovery.ReportFile), "charts and tables of this run"})
	}
	if !noStore {
		steps = append(steps, [2]string{"inferbench serve", "every stored run, with trends, in a browser"})
	}
	steps = append(steps, [2]string{"inferbench doctor", "what each framework will run with on this machine"})
	width := 0
	for _, s := range steps {
		width = max(width, len(s[0]))
	}
	fmt.Fprintln(w, "\nnext:")
	for _, s := range steps {
		fmt.Fprintf(w, "  %-*s  %s\n", width, s[0], s[1])
	}
}

// postAlerts prints the alerts that fired and delivers them (alert.Deliver). Nothing here fails
// the run: problems are printed as warnings.
func (p *pipeline) postAlerts(ctx context.Context, r *result.Run, v *Verdict) {
	for _, n := range v.AlertNotes {
		fmt.Fprintln(p.o.Stderr, "inferbench: warning:", n)
	}
	for _, f := range v.Alerts {
		fmt.Fprintln(p.o.Stderr, "inferbench: ALERT", f.Message)
	}
	for _, err := range alert.Deliver(ctx, p.env.Lookup, p.o.AlertWebhookEnv, r, v.Alerts) {
		fmt.Fprintln(p.o.Stderr, "inferbench: warning:", p.red.Error(err))
	}
}

// explainBaseline explains the scenarios that regressed against the baseline from the profiles of
// both runs: the baseline's are in its run folder when it sits beside this one (an earlier run
// of the same results directory); otherwise the explanation says how to get one.
func explainBaseline(dir string, r *result.Run, v *Verdict) []explain.Scenario {
	if v.BaselineRun == nil || v.Compare.Regressions == 0 {
		return nil
	}
	baseDir := filepath.Join(filepath.Dir(dir), v.BaselineRun.ID)
	if _, err := os.Stat(filepath.Join(baseDir, result.RunFile)); err != nil {
		baseDir = ""
	}
	return explain.Runs(baseDir, dir, explain.Pairs(v.BaselineRun, r, v.Compare, false), explain.Options{})
}
