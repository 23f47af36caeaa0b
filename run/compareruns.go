package run

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
)

// CompareOptions say how Runs.Compare compares two runs and where the comparison goes.
type CompareOptions struct {
	Config compare.Config // thresholds, budgets, the false discovery rate
	Format string         // text, markdown (md), json, junit or html
	All    bool           // text: every metric's rows, not only the primary ones and those that fail
	// Output is the file the comparison is written to; "" or "-" is Stdout.
	Output string
	// Stdout receives the comparison; Stderr a warning when $GITHUB_STEP_SUMMARY cannot be written.
	Stdout, Stderr io.Writer
}

// Compare compares the runs oldRef and newRef name (compare.Runs), writes the comparison in
// o.Format and appends its markdown to $GITHUB_STEP_SUMMARY when set. The error is ErrUsage for
// an unknown format, ErrRegression on a regression or an exceeded budget, and an error when
// nothing is comparable (a verdict needs evidence).
func (rs *Runs) Compare(ctx context.Context, oldRef, newRef string, o CompareOptions) (*compare.Report, error) {
	switch o.Format {
	case "text", "markdown", "md", "json", "junit", "html":
	default:
		return nil, usageErr("--format %q: want text, markdown, json, junit or html", o.Format)
	}
	old, err := rs.Load(ctx, oldRef)
	if err != nil {
		return nil, err
	}
	nw, err := rs.Load(ctx, newRef)
	if err != nil {
		return nil, err
	}
	rep := compare.Runs(old, nw, o.Config)
	rep.Old.Label, rep.New.Label = oldRef, newRef
	var buf bytes.Buffer
	if o.Format == "html" {
		err = compareHTML(&buf, old, nw, rep)
	} else if o.All && o.Format == "text" {
		err = report.CompareTextAll(&buf, rep)
	} else {
		err = report.Comparison(&buf, rep, o.Format)
	}
	if err != nil {
		return rep, err
	}
	if o.Output == "-" || o.Output == "" {
		if _, err := o.Stdout.Write(buf.Bytes()); err != nil {
			return rep, err
		}
	} else if err := os.WriteFile(rs.Env.Path(o.Output), buf.Bytes(), 0o644); err != nil {
		return rep, err
	}
	if err := StepSummary(rs.Env, rep); err != nil && o.Stderr != nil {
		fmt.Fprintln(o.Stderr, "inferbench: GITHUB_STEP_SUMMARY:", err)
	}
	if rep.NoEvidence != "" { // a verdict needs evidence: an error, not a pass
		return rep, fmt.Errorf("nothing comparable: %s", rep.NoEvidence)
	}
	if rep.Failed() {
		return rep, regression("%d regressions, %d budgets exceeded", rep.Regressions, rep.BudgetsExceeded)
	}
	return rep, nil
}

// compareHTML writes `compare --format html`: the self-contained compare page.
func compareHTML(w io.Writer, old, nw *result.Run, rep *compare.Report) error {
	return report.CompareHTML(w, old, nw, rep, report.CompareOptions{})
}
