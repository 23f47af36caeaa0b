// Package history reads a metric's series over the stored runs and finds their change points
// (the `inferbench history` command), and writes them as text, or as one HTML page of trends.
package history

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/store"
)

// Series is one scenario's history of one metric with its change points.
type Series struct {
	Benchmark    string        `json:"benchmark"`
	Scenario     string        `json:"scenario"`
	Metric       string        `json:"metric"`
	Points       []store.Point `json:"points"`
	ChangePoints []ChangePoint `json:"change_points"`
}

// ChangePoint is a shift of a series, with the run where it starts.
type ChangePoint struct {
	stats.ChangePoint
	RunID  string    `json:"run_id"`
	Time   time.Time `json:"time"`
	Commit string    `json:"commit,omitempty"`
}

// SeriesOf groups points by scenario, oldest first, and finds each series' change points.
func SeriesOf(pts []store.Point, metric string, o stats.ChangeOptions) []Series {
	var out []Series
	idx := map[string]int{}
	for _, p := range pts {
		k := p.Benchmark + "/" + p.Scenario
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Series{Benchmark: p.Benchmark, Scenario: p.Scenario, Metric: metric})
		}
		out[i].Points = append(out[i].Points, p)
	}
	for i := range out {
		s := &out[i]
		xs := make([]float64, len(s.Points))
		for j, p := range s.Points {
			xs[j] = p.Value
		}
		s.ChangePoints = []ChangePoint{}
		for _, cp := range stats.ChangePoints(xs, o) {
			p := s.Points[cp.Index]
			s.ChangePoints = append(s.ChangePoints, ChangePoint{ChangePoint: cp, RunID: p.RunID, Time: p.Time, Commit: p.Commit})
		}
	}
	return out
}

// WriteText writes a series: its points (the last 10 unless all), each change point marked, and
// the shifts.
func WriteText(w io.Writer, s Series, all bool) {
	first, last := s.Points[0], s.Points[len(s.Points)-1]
	fmt.Fprintf(w, "%s/%s  %s  %d points, %s → %s\n", s.Benchmark, s.Scenario, s.Metric, len(s.Points),
		first.Time.Local().Format("2006-01-02"), last.Time.Local().Format("2006-01-02"))
	cps := map[int]ChangePoint{}
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
		commit := ""
		if cp.Commit != "" {
			commit = ", commit " + short(cp.Commit)
		}
		fmt.Fprintf(w, "  change point at run %s (%s%s): %s → %s (%+.1f%%, p=%.2g)\n", cp.RunID, cp.Time.Local().Format("2006-01-02 15:04"),
			commit, num(cp.Before), num(cp.After), 100*cp.Magnitude, cp.P)
	}
}

// WriteRuns writes the stored runs as a table.
func WriteRuns(w io.Writer, infos []store.RunInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
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

// HTML writes one self-contained page: a trend chart per benchmark, a line per scenario, change
// points marked.
func HTML(w io.Writer, series []Series, metric string) error {
	name, _, _ := strings.Cut(metric, ".")
	info, _ := result.Lookup(name)
	var trends []report.Trend
	idx := map[string]int{}
	for _, s := range series {
		i, ok := idx[s.Benchmark]
		if !ok {
			i = len(trends)
			idx[s.Benchmark] = i
			trends = append(trends, report.Trend{Benchmark: s.Benchmark, Metric: metric, Unit: info.Unit})
		}
		ts := report.TrendSeries{Name: s.Scenario}
		for _, p := range s.Points {
			ts.Points = append(ts.Points, report.TrendPoint{Time: p.Time, Value: p.Value, RunID: p.RunID, Commit: p.Commit})
		}
		for _, cp := range s.ChangePoints {
			ts.Changes = append(ts.Changes, report.TrendChange{Index: cp.Index, Magnitude: cp.Magnitude})
		}
		trends[i].Series = append(trends[i].Series, ts)
	}
	return report.HistoryHTML(w, trends, report.HTMLOptions{})
}

func short(c string) string {
	if len(c) > 10 {
		return c[:10]
	}
	return c
}

func num(v float64) string { return fmt.Sprintf("%.4g", v) }

// Options are what `inferbench history` shows.
type Options struct {
	Benchmark, Scenario string
	Metric              string // name.stat, e.g. latency_ms.p50
	Days                int    // look back this many days (0 for all)
	Limit               int    // at most this many points, or runs (0 for all)
	Change              stats.ChangeOptions
	Runs                bool   // list the stored runs instead
	Format              string // text, json or html
	All                 bool   // text: every point, not only the last 10
}

// Show writes the history of st that o asks for to w.
func Show(ctx context.Context, w io.Writer, st store.Store, o Options) error {
	var since time.Time
	if o.Days > 0 {
		since = time.Now().Add(-time.Duration(o.Days) * 24 * time.Hour)
	}
	if o.Runs {
		infos, err := st.List(ctx, store.Filter{Benchmark: o.Benchmark, Since: since, Limit: o.Limit})
		if err != nil {
			return err
		}
		if o.Format == "json" {
			return json.NewEncoder(w).Encode(infos)
		}
		return WriteRuns(w, infos)
	}
	pts, err := st.History(ctx, store.Query{Benchmark: o.Benchmark, Scenario: o.Scenario, Metric: o.Metric, Since: since, Limit: o.Limit})
	if err != nil {
		return err
	}
	series := SeriesOf(pts, o.Metric, o.Change)
	switch {
	case o.Format == "html":
		return HTML(w, series, o.Metric)
	case o.Format == "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(series)
	case len(series) == 0:
		bench := ""
		if o.Benchmark != "" {
			bench = " for " + o.Benchmark
		}
		_, err := fmt.Fprintf(w, "no history of %s%s in the last %d days\n", o.Metric, bench, o.Days)
		return err
	}
	for i, s := range series {
		if i > 0 {
			fmt.Fprintln(w)
		}
		WriteText(w, s, o.All)
	}
	return nil
}

// WriteBaselines writes the baselines as a table.
func WriteBaselines(w io.Writer, bs []store.Baseline) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tRUN\tSET\tNOTE")
	for _, b := range bs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", b.Name, b.RunID, b.CreatedAt.Local().Format("2006-01-02 15:04"), b.Note)
	}
	return tw.Flush()
}

// WriteBaseline writes a baseline and the summary table of its run.
func WriteBaseline(w io.Writer, b store.Baseline, r *result.Run) error {
	fmt.Fprintf(w, "baseline %s: run %s, started %s, set %s", b.Name, r.ID, r.StartedAt.Local().Format("2006-01-02 15:04:05"), b.CreatedAt.Local().Format("2006-01-02 15:04"))
	if b.Note != "" {
		fmt.Fprintf(w, " (%s)", b.Note)
	}
	fmt.Fprint(w, "\n\n")
	return report.Table(w, r)
}
