package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
)

type compareCmdFlags struct {
	sf     storeFlags
	cf     compareFlags
	format string
	output string
	all    bool
}

func newCompare(o *IO) *cobra.Command {
	var f compareCmdFlags
	cmd := &cobra.Command{
		Use:   "compare OLD NEW",
		Short: "Compare two runs: per metric the change, its significance and a verdict",
		Long: `compare matches the scenarios of two runs by benchmark and parameters and compares every metric
both have: the medians with their 95% intervals, the change in percent, and the p-value of a
Mann-Whitney U test on the samples (bootstrap ratios for p95/p99 when there are enough samples),
adjusted for the number of tests (Benjamini-Hochberg). A change is a regression only when it is
significant AND worse than the metric's threshold (defaults: latency +15%, memory +20%, throughput
-10%, CPU +25%; see --threshold, benchmark_thresholds.json). Budgets of the new run (its definitions
and performance-budget.yml) are checked too.

OLD and NEW are each a run.json, a run folder, a run id (in --results-dir, then in the store),
"latest" (the newest stored run) or "baseline:NAME".

Exit code: 0 no regression, 3 a regression or an exceeded budget, 1 an error. With
GITHUB_STEP_SUMMARY set, the markdown summary is appended to that file as well.`,
		Example: `  inferbench compare baseline:main latest
  inferbench compare benchmark_results/20261122_143005 benchmark_results/latest --format markdown
  inferbench compare old/run.json new/run.json --threshold latency=10 --threshold resnet:memory=30
  inferbench compare baseline:main latest --format junit -o compare.xml
  inferbench compare baseline:main latest --format html -o compare.html`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd, o, &f, args[0], args[1])
		},
	}
	fl := cmd.Flags()
	f.sf.register(fl)
	f.sf.registerResults(fl)
	f.cf.register(fl)
	fl.StringVar(&f.format, "format", "text", "text, markdown, json, junit or html")
	fl.StringVarP(&f.output, "output", "o", "-", "write the comparison here (- for stdout)")
	fl.BoolVar(&f.all, "all-metrics", false, "text: show every metric's rows, not only the primary ones and those that fail")
	return cmd
}

func runCompare(cmd *cobra.Command, o *IO, f *compareCmdFlags, oldRef, newRef string) error {
	ctx := cmd.Context()
	switch f.format {
	case "text", "markdown", "md", "json", "junit", "html":
	default:
		return usageErr("--format %q: want text, markdown, json, junit or html", f.format)
	}
	cfg, err := f.cf.config(o, cmd.Flags())
	if err != nil {
		return err
	}
	src := f.sf.runs(o)
	defer src.Close()
	old, err := src.Load(ctx, oldRef)
	if err != nil {
		return err
	}
	nw, err := src.Load(ctx, newRef)
	if err != nil {
		return err
	}
	rep := compare.Runs(old, nw, cfg)
	rep.Old.Label, rep.New.Label = oldRef, newRef
	var buf bytes.Buffer
	if f.format == "html" {
		err = compareHTML(&buf, old, nw, rep)
	} else if f.all && f.format == "text" {
		err = report.CompareTextAll(&buf, rep)
	} else {
		err = report.Comparison(&buf, rep, f.format)
	}
	if err != nil {
		return err
	}
	if f.output == "-" || f.output == "" {
		if _, err := o.Stdout.Write(buf.Bytes()); err != nil {
			return err
		}
	} else if err := os.WriteFile(inDir(o, f.output), buf.Bytes(), 0o644); err != nil {
		return err
	}
	if err := run.StepSummary(env(o), rep); err != nil {
		fmt.Fprintln(o.Stderr, "inferbench: GITHUB_STEP_SUMMARY:", err)
	}
	if rep.NoEvidence != "" { // a verdict needs evidence: an error, not a pass
		return &CodeError{Code: ExitError, Err: fmt.Errorf("nothing comparable: %s", rep.NoEvidence)}
	}
	if rep.Failed() {
		return &CodeError{Code: ExitRegression, Err: fmt.Errorf("%d regressions, %d budgets exceeded", rep.Regressions, rep.BudgetsExceeded)}
	}
	return nil
}

// compareHTML writes `compare --format html`: the self-contained compare page.
func compareHTML(w io.Writer, old, nw *result.Run, rep *compare.Report) error {
	deltas, method := report.DeltasOf(rep)
	return report.CompareHTML(w, old, nw, deltas, report.CompareOptions{Method: method, Warnings: append(noEvidence(rep), rep.Warnings...)})
}

// noEvidence is the comparison's "nothing comparable" reason as a warning line, if any.
func noEvidence(rep *compare.Report) []string {
	if rep.NoEvidence == "" {
		return nil
	}
	return []string{"FAIL: nothing comparable: " + rep.NoEvidence}
}
