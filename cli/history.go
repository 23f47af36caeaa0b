package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/history"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/store"
)

func init() { extraCommands = append(extraCommands, newHistory) }

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

// Series is one scenario's history of one metric with its change points (history --json).
type Series = history.Series

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
	fl.StringVar(&f.metric, "metric", "latency_ms.p50", "metric and statistic")
	fl.StringVar(&f.scenario, "scenario", "", "only this scenario (name as in the results, e.g. batch_size=8)")
	fl.IntVar(&f.days, "days", 30, "look back this many days (0 for all)")
	fl.IntVar(&f.limit, "limit", 0, "at most this many points (the newest; 0 for all)")
	fl.Float64Var(&f.maxP, "max-p", stats.DefaultChangeP, "change points: p-value below which a shift is accepted (the false-alarm rate of a series without one)")
	fl.Float64Var(&f.minMag, "min-magnitude", 0, "change points: ignore shifts smaller than this fraction (0.05 = 5%)")
	fl.BoolVar(&f.runs, "runs", false, "list the stored runs instead")
	fl.BoolVar(&f.all, "all", false, "print every point, not only the last 10 of each series")
	fl.BoolVar(&f.asJSON, "json", false, "print JSON")
	fl.StringVar(&f.format, "format", "text", "text, json or html (trends with change points marked, one self-contained page)")
	return cmd
}

func runHistory(cmd *cobra.Command, o *IO, f *historyFlags, bench string) error {
	ctx := cmd.Context()
	switch f.format {
	case "text", "json", "html":
	default:
		return usageErr("--format %q: want text, json or html", f.format)
	}
	if _, _, err := store.SplitMetric(f.metric); err != nil {
		return usageErr("--metric: %v", err)
	}
	st, err := f.sf.open(ctx, o)
	if err != nil {
		return err
	}
	defer st.Close()
	var since time.Time
	if f.days > 0 {
		since = time.Now().Add(-time.Duration(f.days) * 24 * time.Hour)
	}
	if f.runs {
		infos, err := st.List(ctx, store.Filter{Benchmark: bench, Since: since, Limit: f.limit})
		if err != nil {
			return err
		}
		if f.asJSON {
			return json.NewEncoder(o.Stdout).Encode(infos)
		}
		tw := tabwriter.NewWriter(o.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tSTARTED\tCOMMIT\tBRANCH\tSCENARIOS\tOK\tFAILED\tSKIPPED")
		for _, i := range infos {
			partial := ""
			if i.Partial {
				partial = " (partial)"
			}
			fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", i.ID, partial, i.StartedAt.Local().Format("2006-01-02 15:04:05"), short(i.Commit), i.Branch, i.Scenarios, i.Summary.Succeeded, i.Summary.Failed, i.Summary.Skipped)
		}
		return tw.Flush()
	}
	series, err := history.Query(ctx, st, store.Query{Benchmark: bench, Scenario: f.scenario, Metric: f.metric, Since: since, Limit: f.limit},
		stats.ChangeOptions{MaxP: f.maxP, MinMagnitude: f.minMag})
	if err != nil && series == nil {
		return err
	}
	if err != nil {
		fmt.Fprintln(o.Stderr, "inferbench:", err)
	}
	if f.format == "html" {
		return historyHTML(o.Stdout, series, f.metric)
	}
	if f.asJSON || f.format == "json" {
		return writeJSON(o.Stdout, series)
	}
	if len(series) == 0 {
		_, err := fmt.Fprintf(o.Stdout, "no history of %s%s in the last %d days\n", f.metric, forBench(bench), f.days)
		return err
	}
	for i, s := range series {
		if i > 0 {
			fmt.Fprintln(o.Stdout)
		}
		writeSeries(o.Stdout, s, f.all)
	}
	return nil
}

func forBench(b string) string {
	if b == "" {
		return ""
	}
	return " for " + b
}

func short(c string) string {
	if len(c) > 10 {
		return c[:10]
	}
	return c
}

func writeSeries(w io.Writer, s Series, all bool) {
	first, last := s.Points[0], s.Points[len(s.Points)-1]
	fmt.Fprintf(w, "%s  %s  %d points, %s → %s\n", s.Name(), s.Metric, len(s.Points),
		first.Time.Local().Format("2006-01-02"), last.Time.Local().Format("2006-01-02"))
	cps := map[int]history.ChangePoint{}
	for _, cp := range s.ChangePoints {
		cps[cp.Index] = cp
	}
	from := 0
	if !all && len(s.Points) > 10 {
		from = len(s.Points) - 10
		fmt.Fprintf(w, "  … %d earlier points (--all shows them)\n", from)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for j := from; j < len(s.Points); j++ {
		p := s.Points[j]
		mark := ""
		if cp, ok := cps[j]; ok {
			mark = fmt.Sprintf("◀ shift %+.1f%%", 100*cp.Magnitude)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", p.Time.Local().Format("2006-01-02 15:04"), p.RunID, short(p.Commit), num(p.Value), mark)
	}
	tw.Flush()
	if len(s.ChangePoints) == 0 {
		fmt.Fprintln(w, "  no change point")
	}
	for _, cp := range s.ChangePoints {
		fmt.Fprintf(w, "  change point at run %s (%s%s): %s → %s (%+.1f%%, p=%.2g)\n", cp.RunID, cp.Time.Local().Format("2006-01-02 15:04"),
			commitSuffix(cp.Commit), num(cp.Before), num(cp.After), 100*cp.Magnitude, cp.P)
	}
}

func commitSuffix(c string) string {
	if c == "" {
		return ""
	}
	return ", commit " + short(c)
}

func num(v float64) string { return fmt.Sprintf("%.4g", v) }
