package cli

import (
	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/internal/cli/recorded"
)

type compareCmdFlags struct {
	runs     twoRunFlags
	format   string
	output   string
	json     string
	all      bool
	reportAs []string
	sessions bool
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
-10%, CPU +25%, or from the noise of 10+ stored runs of the scenario; see --threshold,
benchmark_thresholds.json). Budgets of the new run (its definitions and performance-budget.yml)
are checked too.

Only gated metrics fail: each scenario's primary metrics (its definition's gate:, else latency_ms
for commands, Go functions and models; ttft_ms, itl_ms, output_tokens_per_s for serving;
tokens_per_s, ttft_ms for an LLM worker) and those --gate names. The others (CPU, RSS, I/O,
harness_latency_ms, counts, load time) are shown with their change as information. A metric with
a single value per run never fails, only a budget does.

With --between-sessions (the pytest plugin's --inferbench-compare passes it) the runs are taken
as measured in separate sessions, whose samples say nothing of the machine's state in the other:
a gated timed change beyond its threshold is a regression only where 10+ stored runs of the
scenario give this machine's run-to-run noise (the threshold is then at least theirs); without
them it is unknown (exit 0, --strict fails it), with the smallest change the sessions could have
seen and the commands that can tell (run --baseline-ref, instruction counts). Counts are exact:
unchanged by it.

OLD and NEW are each a run.json, a run folder, a run id (in --results-dir, then in the store),
"latest" (the newest stored run) or "baseline:NAME".

Exit code: 0 no regression, 3 a regression of a gated metric or an exceeded budget, 1 an error. With
GITHUB_STEP_SUMMARY set, the markdown summary is appended to that file as well.`,
		Example: `  inferbench compare baseline:main latest
  inferbench compare benchmark_results/20261122_143005 benchmark_results/latest --format markdown
  inferbench compare old/run.json new/run.json --threshold latency=10 --threshold resnet:memory=30
  inferbench compare baseline:main latest --gate peak_rss_mb --gate resnet:cpu_pct
  inferbench compare baseline:main latest --between-sessions --store .inferbench/history.db
  inferbench compare baseline:main latest --format junit -o compare.xml
  inferbench compare baseline:main latest --json compare.json   # the table, and the JSON from the same comparison
  inferbench compare baseline:main latest --format html -o compare.html
  inferbench compare baseline:main latest --report-as vllm   # and both runs' figures by vLLM's definitions`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd, o, &f, args[0], args[1])
		},
	}
	fl := cmd.Flags()
	f.runs.register(fl)
	formatFlag(fl, &f.format, "text", "", "text", "markdown", "json", "junit", "html")
	fl.StringVarP(&f.output, "output", "o", "-", "write the comparison here (- for stdout)")
	fl.StringVar(&f.json, "json", "", "also write the comparison as JSON to this file (the same comparison as --format's output: compared once)")
	fl.BoolVar(&f.all, "all-metrics", false, "text: show every metric's rows, not only the primary ones and those that fail")
	fl.BoolVar(&f.sessions, "between-sessions", false, "the runs were measured in separate sessions (a saved pytest session and this one): a gated timed change beyond its threshold is a regression only against the run-to-run noise of 10+ stored runs of the scenario, else unknown (exit 0; --strict fails it)")
	fl.StringSliceVar(&f.reportAs, "report-as", nil, "text, markdown: add each serving scenario's figures in both runs by these tools' definitions, named as they name them: vllm, aiperf, guidellm (docs/import.md)")
	groupFlags(cmd,
		flagGroup{"Where the runs are", []string{"results-dir", "store"}},
		flagGroup{"Comparison and gate", []string{"threshold", "thresholds-file", "budget-file", "alpha", "gate", "uncorrected", "strict", "between-sessions"}},
		flagGroup{"Output", []string{"format", "output", "json", "all-metrics", "report-as"}})
	return cmd
}

func runCompare(cmd *cobra.Command, o *IO, f *compareCmdFlags, oldRef, newRef string) error {
	tools, err := recorded.ReportAsFlag(f.reportAs)
	if err != nil {
		return err
	}
	src, cfg, err := f.runs.open(o, cmd.Flags())
	if err != nil {
		return err
	}
	defer src.Close()
	cfg.Sessions = f.sessions
	_, err = src.Compare(cmd.Context(), oldRef, newRef, recorded.CompareOptions{Config: cfg, Format: f.format, All: f.all, Output: f.output, JSON: f.json, Stdout: o.Stdout, Stderr: o.Stderr, ReportAs: tools})
	return err
}
