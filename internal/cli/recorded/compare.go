package recorded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/explain"
	"github.com/inferbench/inferbench/internal/history"
	"github.com/inferbench/inferbench/internal/stage/recovery"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
)

// CompareOptions say how Source.Compare compares two runs and where the comparison goes.
type CompareOptions struct {
	Config compare.Config // thresholds, budgets, the false discovery rate
	Format string         // text, markdown (md), json, junit or html
	All    bool           // text: every metric's rows, not only the primary ones and those that fail
	// Output is the file the comparison is written to; "" or "-" is Stdout.
	Output string
	// JSON, when set, is a file that also receives the comparison as JSON: a caller that wants
	// the table and the data gets both from one comparison (a comparison bootstraps its tails).
	JSON string
	// Stdout receives the comparison; Stderr a warning when $GITHUB_STEP_SUMMARY cannot be written.
	Stdout, Stderr io.Writer
	// ReportAs, for text and markdown, adds each serving scenario's figures in both runs by
	// these tools' definitions (vllm, aiperf, guidellm; serveimport.ReportAs).
	ReportAs []string
}

// Compare compares the runs oldRef and newRef name (compare.Runs), writes the comparison in
// o.Format and appends its markdown to $GITHUB_STEP_SUMMARY when set. The error is run.ErrUsage
// for an unknown format, run.ErrRegression on a regression or an exceeded budget, and an error when
// nothing is comparable (a verdict needs evidence).
func (rs *Source) Compare(ctx context.Context, oldRef, newRef string, o CompareOptions) (*compare.Report, error) {
	switch o.Format {
	case "text", "markdown", "md", "json", "junit", "html":
	default:
		return nil, exit.UsageError(fmt.Errorf("--format %q: want text, markdown, json, junit or html", o.Format))
	}
	if len(o.ReportAs) > 0 && o.Format != "text" && o.Format != "markdown" && o.Format != "md" {
		return nil, exit.UsageError(fmt.Errorf("--report-as with --format %q: want text or markdown", o.Format))
	}
	old, oldDir, nw, newDir, rep, err := rs.comparePair(ctx, oldRef, newRef, o.Config)
	if err != nil {
		return nil, err
	}
	rep.Old.Label, rep.New.Label = oldRef, newRef
	xs := explainRegressed(old, oldDir, nw, newDir, rep)
	var buf bytes.Buffer
	if o.Format == "html" {
		var section template.HTML
		if section, err = explain.HTML(xs); err == nil {
			err = report.CompareHTML(&buf, old, nw, rep, report.CompareOptions{HTMLOptions: report.HTMLOptions{Explain: section}})
		}
	} else if o.All && o.Format == "text" {
		err = report.CompareTextAll(&buf, rep)
	} else {
		err = report.Comparison(&buf, rep, o.Format)
	}
	if err != nil {
		return rep, err
	}
	if err := explainFailed(&buf, xs, o.Format); err != nil {
		return rep, err
	}
	if len(o.ReportAs) > 0 {
		if err := writeAsCompare(&buf, old, oldDir, nw, newDir, o.ReportAs); err != nil {
			return rep, err
		}
	}
	if o.Output == "-" || o.Output == "" {
		if _, err := o.Stdout.Write(buf.Bytes()); err != nil {
			return rep, err
		}
	} else if err := os.WriteFile(rs.Env.Path(o.Output), buf.Bytes(), 0o644); err != nil {
		return rep, err
	}
	if o.JSON != "" {
		var js bytes.Buffer
		if err := report.Comparison(&js, rep, "json"); err != nil {
			return rep, err
		}
		if err := os.WriteFile(rs.Env.Path(o.JSON), js.Bytes(), 0o644); err != nil {
			return rep, fmt.Errorf("--json: %w", err)
		}
	}
	if err := explain.StepSummary(rs.Env.Lookup, rep, xs); err != nil && o.Stderr != nil {
		fmt.Fprintln(o.Stderr, "inferbench: GITHUB_STEP_SUMMARY:", err)
	}
	if rep.NoEvidence != "" { // a verdict needs evidence: an error, not a pass
		return rep, fmt.Errorf("nothing comparable: %s", rep.NoEvidence)
	}
	if rep.Failed() {
		return rep, exit.RegressionError(errors.New(report.Outcome(rep)))
	}
	if why := rep.Undecided(); why != "" { // not a pass: nothing tested the change (exit 1)
		return rep, errors.New(why)
	}
	if rep.Unknown > 0 && o.Stderr != nil { // the exit status is 0: say what it does not cover
		fmt.Fprintf(o.Stderr, "inferbench: exit 0, but %d gated change(s) beyond threshold between sessions are unknown; --strict makes them fail (exit 3)\n", rep.Unknown)
	}
	if rep.Unverified > 0 && o.Stderr != nil { // the exit status is 0: say what it does not cover
		fmt.Fprintf(o.Stderr, "inferbench: exit 0, but %d gated change(s) beyond threshold are untested (a single value a side); --strict makes them fail (exit 3)\n", rep.Unverified)
	}
	return rep, nil
}

// historyStore is the store whose history gives noise-aware thresholds: the one a run was loaded
// from, else the configured store or the default file when it exists (comparing two run.json
// files creates no store).
func (rs *Source) historyStore(ctx context.Context) store.Historian {
	if rs.st == nil {
		if recovery.StoreLocation(rs.Store, rs.Env.Lookup) == "" {
			if _, err := os.Stat(store.SQLitePath("", rs.Env.Dir)); err != nil {
				return nil
			}
		}
		if _, err := rs.OpenStore(ctx); err != nil {
			return nil
		}
	}
	return rs.st
}

// explainFailed appends to a text or markdown comparison the explanation of each regressed
// scenario, from the profiles in the run folders (or why there is none and how to get one).
func explainFailed(w io.Writer, xs []explain.Scenario, format string) error {
	switch format {
	case "text", "markdown", "md":
	default:
		return nil
	}
	if len(xs) == 0 {
		return nil
	}
	if format == "text" {
		fmt.Fprintln(w)
	}
	return explain.Render(w, xs, format)
}

// explainRegressed explains the regressed scenarios of a comparison (none without a regression).
func explainRegressed(old *result.Run, oldDir string, nw *result.Run, newDir string, rep *compare.Report) []explain.Scenario {
	if rep.Regressions == 0 {
		return nil
	}
	return explain.Runs(oldDir, newDir, explain.Pairs(old, nw, rep, false), explain.Options{})
}

// comparePair loads the runs oldRef and newRef name, with their folders, and compares them under
// cfg, with noise-aware thresholds from the store's history (compare.NoiseOf) unless cfg has one.
func (rs *Source) comparePair(ctx context.Context, oldRef, newRef string, cfg compare.Config) (old *result.Run, oldDir string, nw *result.Run, newDir string, rep *compare.Report, err error) {
	if old, oldDir, err = rs.LoadFolder(ctx, oldRef); err != nil {
		return
	}
	if nw, newDir, err = rs.LoadFolder(ctx, newRef); err != nil {
		return
	}
	if st := rs.historyStore(ctx); st != nil && cfg.History == nil {
		cfg.History = history.NoiseHistory(ctx, st, nw)
	}
	rep = compare.Runs(old, nw, cfg)
	return
}
