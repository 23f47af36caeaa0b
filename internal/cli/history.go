package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/internal/history"
	"github.com/inferbench/inferbench/stats"
)

type historyFlags struct {
	sf       storeFlags
	metric   string
	scenario string
	days     int
	limit    int
	maxP     float64
	minMag   float64
	runs     bool
	asJSON   bool
	all      bool
	format   string
}

func newHistory(o *IO) *cobra.Command {
	var f historyFlags
	cmd := &cobra.Command{
		Use:   "history [BENCHMARK]",
		Short: "Show a metric over the stored runs, with detected change points",
		Long: `history prints one metric statistic per scenario over time, from the history store, and the change
points found in each series (binary segmentation with a max-t statistic calibrated by simulation:
deterministic, with each shift's magnitude and p-value; docs/history.md gives its detection and
false-alarm rates). A series is one scenario identity: its benchmark and every parameter, --set
overrides included. --runs lists the stored runs instead.

Metrics are a name and a statistic: latency_ms.p50 (or .median), .p90, .p95, .p99, .mean, .min,
.max, .std, .cv, .n; a bare name means the value or the median.`,
		Example: `  inferbench history resnet50 --metric latency_ms.p50 --days 30
  inferbench history --metric ttft_ms.p95 --scenario 'concurrency=8' --json
  inferbench history --runs --days 7
  inferbench history resnet50 --metric latency_ms.p95 --format html > trends.html
  inferbench history --store postgres://bench@db/bench llama --metric output_tokens_per_s`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			bench := ""
			if len(args) == 1 {
				bench = args[0]
			}
			return runHistory(cmd, o, &f, bench)
		},
	}
	fl := cmd.Flags()
	f.sf.register(fl)
	fl.StringVar(&f.metric, "metric", "latency_ms.p50", "metric and statistic; several separated by commas (text format): latency_ms.p95,throughput_ips")
	fl.StringVar(&f.scenario, "scenario", "", "only this scenario (name as in the results, e.g. batch_size=8)")
	fl.IntVar(&f.days, "days", 30, "look back this many days (0 for all)")
	fl.IntVar(&f.limit, "limit", 0, "at most this many points (the newest; 0 for all)")
	fl.Float64Var(&f.maxP, "max-p", stats.DefaultChangeP, "change points: p-value below which a shift is accepted (the false-alarm rate of a series without one)")
	fl.Float64Var(&f.minMag, "min-magnitude", 0, "change points: ignore shifts smaller than this fraction (0.05 = 5%)")
	fl.BoolVar(&f.runs, "runs", false, "list the stored runs instead")
	fl.BoolVar(&f.all, "all", false, "print every point, not only the last 10 of each series")
	fl.BoolVar(&f.asJSON, "json", false, "print JSON")
	formatFlag(fl, &f.format, "text", "html draws the trends with change points marked, one self-contained page", "text", "json", "html")
	groupFlags(cmd,
		flagGroup{"What to show", []string{"metric", "scenario", "days", "limit", "runs", "all"}},
		flagGroup{"Change points", []string{"max-p", "min-magnitude"}},
		flagGroup{"Output", []string{"format", "json"}},
		flagGroup{"Store", []string{"store"}})
	return cmd
}

func runHistory(cmd *cobra.Command, o *IO, f *historyFlags, bench string) error {
	opts := history.Options{
		Benchmark: bench, Scenario: f.scenario, Metric: f.metric, Days: f.days, Limit: f.limit,
		Change: stats.ChangeOptions{MaxP: f.maxP, MinMagnitude: f.minMag},
		Runs:   f.runs, Format: f.format, All: f.all, Warnings: o.Stderr,
	}
	if f.asJSON {
		opts.Format = "json"
	}
	// Several metrics (--metric latency,memory,throughput, as a regression script lists them): one
	// section each.
	metrics := strings.Split(f.metric, ",")
	for i, m := range metrics {
		metrics[i] = strings.TrimSpace(m)
	}
	if len(metrics) > 1 && !f.runs && opts.Format != "text" {
		return usageErr("--metric %q: several metrics are shown as text, one section each; with --format %s give one metric", f.metric, opts.Format)
	}
	for _, m := range metrics {
		opts.Metric = m
		if err := opts.Check(); err != nil {
			return usageErr("--metric %q: %v", m, err)
		}
	}
	st, err := f.sf.open(cmd.Context(), o)
	if err != nil {
		return err
	}
	defer st.Close()
	if len(metrics) == 1 || f.runs {
		opts.Metric = metrics[0]
		return history.Show(cmd.Context(), o.Stdout, st, opts)
	}
	for i, m := range metrics {
		if i > 0 {
			fmt.Fprintln(o.Stdout)
		}
		fmt.Fprintf(o.Stdout, "== %s ==\n", m)
		opts.Metric = m
		if err := history.Show(cmd.Context(), o.Stdout, st, opts); err != nil {
			return err
		}
	}
	return nil
}
