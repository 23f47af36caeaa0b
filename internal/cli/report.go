package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/cli/recorded"
)

type reportFlags struct {
	output   string
	format   string
	reportAs []string
	store    storeFlags // store.resultsDir is --results-dir
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
  inferbench report 20261122_143005 --format text
  inferbench report latest --report-as vllm              # mean_ttft_ms, p99_itl_ms, request_throughput, ...
  inferbench report latest --report-as vllm,aiperf,guidellm --format json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			arg := ""
			if len(args) == 1 {
				arg = args[0]
			}
			if len(rf.reportAs) > 0 && cmd.Flags().Changed("format") && rf.format == "html" {
				return exit.UsageError(fmt.Errorf("--report-as writes a table or JSON, not --format html"))
			}
			return runReport(cmd.Context(), o, &rf, arg)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&rf.output, "output", "o", "", "write here (- for stdout); default: report.html in the run's folder")
	formatFlag(f, &rf.format, "html", "with --report-as, text (the default) or json (table, its old name, is text)", "html", "text", "json")
	f.StringSliceVar(&rf.reportAs, "report-as", nil, "the run's serving figures by these tools' definitions, named as they name them, from each request's timestamps: vllm, aiperf, guidellm (a comma list; docs/import.md)")
	f.StringVar(&rf.store.resultsDir, "results-dir", "benchmark_results", "folder holding the run folders (as run's --output-dir)")
	rf.store.register(f)
	groupFlags(cmd,
		flagGroup{"Where the run is", []string{"results-dir", "store"}},
		flagGroup{"Output", []string{"output", "format", "report-as"}})
	return cmd
}

func runReport(ctx context.Context, o *IO, rf *reportFlags, arg string) error {
	src := rf.store.runs(o)
	defer src.Close()
	if len(rf.reportAs) > 0 {
		tools, err := recorded.ReportAsFlag(rf.reportAs)
		if err != nil {
			return err
		}
		format := rf.format
		if format == "html" { // the default: --report-as's is a table
			format = "text"
		}
		w := o.Stdout
		if rf.output != "" && rf.output != "-" {
			f, err := os.Create(env(o).Path(rf.output))
			if err != nil {
				return err
			}
			defer f.Close()
			w = f
		}
		return src.ReportAs(ctx, arg, tools, format, w)
	}
	out, err := src.Report(ctx, arg, rf.format, rf.output, o.Stdout)
	if err != nil || out == "" {
		return err
	}
	_, err = fmt.Fprintf(o.Stdout, "report: %s\n", out)
	return err
}
