package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/redact"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
)

func init() { extraCommands = append(extraCommands, newReport) }

type reportFlags struct {
	output string
	format string
	store  storeFlags // store.resultsDir is --results-dir
}

func newReport(o *IO) *cobra.Command {
	var rf reportFlags
	cmd := &cobra.Command{
		Use:   "report [RUN|latest|baseline:NAME]",
		Short: "Render a run as a self-contained HTML report (or a table, or JSON)",
		Long: `report renders one run: a run folder, a run.json file, a run id under --results-dir, or "latest"
(the default). The HTML report is a single file that opens offline: the environment, the summary,
per benchmark the charts that fit its kind, and the advice. Without -o it is written into the run's
folder as report.html (every run already writes one there).`,
		Example: `  inferbench report                       # rewrites benchmark_results/latest/report.html
  inferbench report latest -o /tmp/run.html
  inferbench report benchmark_results/20261122_143005 -o - > run.html
  inferbench report 20261122_143005 --format table`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			arg := ""
			if len(args) == 1 {
				arg = args[0]
			}
			return runReport(cmd.Context(), o, &rf, arg)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&rf.output, "output", "o", "", "write here (- for stdout); default: report.html in the run's folder")
	f.StringVar(&rf.format, "format", "html", "html, table or json")
	f.StringVar(&rf.store.resultsDir, "results-dir", "benchmark_results", "folder holding the run folders (as run's --output-dir)")
	rf.store.register(f)
	return cmd
}

// resolveRunPath finds a run given as a folder, a run.json, a run id under resultsDir or "latest".
func resolveRunPath(o *IO, resultsDir, arg string) (string, error) {
	if arg == "" {
		arg = result.LatestLink
	}
	if _, err := os.Stat(inDir(o, arg)); err == nil && arg != result.LatestLink {
		return inDir(o, arg), nil
	}
	p := filepath.Join(inDir(o, resultsDir), arg)
	if _, err := os.Stat(p); err != nil {
		return "", usageErr("run %q: not a run folder, a run.json, nor a run under %s (see --results-dir)", arg, resultsDir)
	}
	return p, nil
}

func runReport(ctx context.Context, o *IO, rf *reportFlags, arg string) error {
	switch rf.format {
	case "html", "table", "json":
	default:
		return usageErr("--format %q: want html, table or json", rf.format)
	}
	var r *result.Run
	path, err := resolveRunPath(o, rf.store.resultsDir, arg)
	if err == nil {
		r, err = result.Load(path)
	} else if !strings.HasPrefix(arg, "baseline:") && arg != "" && arg != result.LatestLink && strings.ContainsAny(arg, `/\`) {
		return err
	} else {
		// Not on disk: a run id, latest or baseline:NAME from the history store.
		src := &runSource{o: o, sf: &rf.store}
		defer src.Close()
		if arg == "" {
			arg = result.LatestLink
		}
		if r, err = src.load(ctx, arg); err == nil {
			path = ""
			if rf.output == "" && rf.format == "html" {
				rf.output = "report-" + r.ID + ".html"
			}
		}
	}
	if err != nil {
		return err
	}
	redact.Run(r) // a run recorded by an older version may hold a secret
	var buf bytes.Buffer
	switch rf.format {
	case "html":
		err = report.RunHTML(&buf, r, report.HTMLOptions{})
	case "table":
		err = report.Table(&buf, r)
	case "json":
		err = result.WriteJSON(&buf, r)
	}
	if err != nil {
		return fmt.Errorf("render %s: %w", path, err)
	}
	out := rf.output
	switch {
	case out == "-" || out == "" && rf.format != "html":
		_, err = o.Stdout.Write(buf.Bytes())
		return err
	case out == "":
		dir := path
		if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
			dir = filepath.Dir(path)
		}
		out = filepath.Join(dir, run.ReportFile)
	default:
		out = inDir(o, out)
	}
	if err := result.WriteFileAtomic(out, buf.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	fmt.Fprintf(o.Stdout, "report: %s\n", out)
	return nil
}
