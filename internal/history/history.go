// Package history turns the stored points of one metric into series, one per scenario identity
// (benchmark and every parameter, --set overrides included, as compare matches scenarios), finds
// each series' change points (stats.ChangePoints), and writes them as text, JSON or one HTML page
// of trends (the `inferbench history` command).
package history

import (
	"context"
	"fmt"
	"github.com/inferbench/inferbench/internal/base/nearest"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/internal/page"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/store"
)

// Series is one scenario's history of one metric with its change points.
type Series struct {
	Benchmark string `json:"benchmark"`
	Scenario  string `json:"scenario"`
	// Params are the scenario's parameters, when the runs could be read; Distinct names those
	// that tell this series apart from another of the same scenario name ("dtype=float16").
	Params   map[string]any `json:"params,omitempty"`
	Distinct string         `json:"distinct,omitempty"`
	// Measure is how the series' runs measured the scenario ("" timed, "instructions" counted),
	// and Dirty that their trees had uncommitted changes: each makes a series of its own, so that
	// a trend never mixes valgrind's time with a timed run's, nor a commit's code with edits on it.
	Measure      string        `json:"measure,omitempty"`
	Dirty        bool          `json:"dirty,omitempty"`
	Metric       string        `json:"metric"`
	Points       []store.Point `json:"points"`
	ChangePoints []ChangePoint `json:"change_points"`
}

// Name is "benchmark/scenario", followed by what tells the series apart when another has the
// same scenario name: "resnet/batch_size=8 [dtype=float16]".
func (s *Series) Name() string {
	n := s.Benchmark + "/" + s.Scenario
	if s.Distinct != "" {
		n += " [" + s.Distinct + "]"
	}
	if s.Measure != "" {
		n += " [measure=" + s.Measure + "]"
	}
	if s.Dirty {
		n += " (uncommitted changes)"
	}
	return n
}

// ChangePoint is a change point of a series, with the run it starts at.
type ChangePoint struct {
	stats.ChangePoint
	RunID  string    `json:"run_id"`
	Time   time.Time `json:"time"`
	Commit string    `json:"commit,omitempty"`
}

// Identity returns a point's scenario identity (a key, and the parameters when known).
type Identity func(p store.Point) (key string, params map[string]any)

// ByName is the identity of stores that cannot say more: benchmark and scenario name.
func ByName(p store.Point) (string, map[string]any) {
	return p.Benchmark + "\x00" + p.Scenario, nil
}

// FromRuns returns the identity that keys a point by its scenario's benchmark and parameters
// (compare.Key): the point's own Params where the store has them, else read from its run in runs
// (once per run; runs stored by an older inferbench), so runs of one scenario
// name with different parameters (--set dtype=float16) make separate series. A run that cannot
// be read falls back on the name, and the error is returned by Err.
func FromRuns(ctx context.Context, runs store.Runs) (Identity, func() error) {
	type entry struct {
		key    string
		params map[string]any
	}
	byRun := map[string]map[string]entry{} // run → benchmark/scenario → identity
	var firstErr error
	id := func(p store.Point) (string, map[string]any) {
		if p.Params != nil { // the store knows the scenario's parameters: no run to read
			return compare.Key(&result.Scenario{Benchmark: p.Benchmark, Scenario: p.Scenario, Params: p.Params}), p.Params
		}
		scs, ok := byRun[p.RunID]
		if !ok {
			scs = map[string]entry{}
			r, err := runs.Get(ctx, p.RunID)
			if err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("history: run %s: %w (its points are grouped by scenario name)", p.RunID, err)
				}
			} else {
				for i := range r.Scenarios {
					s := &r.Scenarios[i]
					scs[s.ID()] = entry{compare.Key(s), s.Params}
				}
			}
			byRun[p.RunID] = scs
		}
		if e, ok := scs[p.Benchmark+"/"+p.Scenario]; ok {
			return e.key, e.params
		}
		return ByName(p)
	}
	return id, func() error { return firstErr }
}

// Build groups points (oldest first) into series by identity, in order of first appearance, and
// finds each series' change points with o.
func Build(pts []store.Point, metric string, id Identity, o stats.ChangeOptions) []Series {
	if id == nil {
		id = ByName
	}
	var out []Series
	idx := map[string]int{}
	for _, p := range pts {
		k, params := id(p)
		k += "\x00" + p.Measure + "\x00" + strconv.FormatBool(p.Dirty)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Series{Benchmark: p.Benchmark, Scenario: p.Scenario, Params: params, Measure: p.Measure, Dirty: p.Dirty, Metric: metric})
		}
		out[i].Points = append(out[i].Points, p)
	}
	distinguish(out)
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

// distinguish sets Distinct on series that share a benchmark and scenario name: the parameters
// whose values differ among them.
func distinguish(ss []Series) {
	groups := map[string][]int{}
	for i := range ss {
		k := ss[i].Benchmark + "/" + ss[i].Scenario
		groups[k] = append(groups[k], i)
	}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		differ := map[string]bool{}
		for _, i := range g {
			for _, j := range g {
				for k := range ss[i].Params {
					if fmt.Sprint(ss[i].Params[k]) != fmt.Sprint(ss[j].Params[k]) {
						differ[k] = true
					}
				}
				for k := range ss[j].Params {
					if _, ok := ss[i].Params[k]; !ok {
						differ[k] = true
					}
				}
			}
		}
		keys := slices.Sorted(maps.Keys(differ))
		for _, i := range g {
			var parts []string
			for _, k := range keys {
				v, ok := ss[i].Params[k]
				if !ok {
					v = "-"
				}
				parts = append(parts, fmt.Sprintf("%s=%v", k, v))
			}
			ss[i].Distinct = strings.Join(parts, ",")
		}
	}
}

// Query reads the points q asks for from st and builds their series by full identity.
func Query(ctx context.Context, st interface {
	History(ctx context.Context, q store.Query) ([]store.Point, error)
	store.Runs
}, q store.Query, o stats.ChangeOptions) ([]Series, error) {
	pts, err := st.History(ctx, q)
	if err != nil {
		return nil, err
	}
	id, errf := FromRuns(ctx, st)
	ss := Build(pts, q.Metric, id, o)
	return ss, errf()
}

// WriteText writes a series: its points (the last 10 unless o.All), each change point marked, and
// the shifts.
func WriteText(w io.Writer, s Series, o Options) {
	first, last := s.Points[0], s.Points[len(s.Points)-1]
	fmt.Fprintf(w, "%s  %s  %d points, %s → %s\n", s.Name(), s.Metric, len(s.Points),
		first.Time.Local().Format("2006-01-02"), last.Time.Local().Format("2006-01-02"))
	cps := map[int]ChangePoint{}
	for _, cp := range s.ChangePoints {
		cps[cp.Index] = cp
	}
	from := 0
	if !o.All && len(s.Points) > 10 {
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
	return page.HistoryHTML(w, Trends(series, metric))
}

// Trends are the series as the trends page draws them: a chart per benchmark, a line per series
// with its change points.
func Trends(series []Series, metric string) []page.Trend {
	name, _, _ := strings.Cut(metric, ".")
	info, _ := result.Lookup(name)
	var trends []page.Trend
	idx := map[string]int{}
	for _, s := range series {
		i, ok := idx[s.Benchmark]
		if !ok {
			i = len(trends)
			idx[s.Benchmark] = i
			trends = append(trends, page.Trend{Benchmark: s.Benchmark, Metric: metric, Unit: info.Unit})
		}
		ts := page.TrendSeries{Name: strings.TrimPrefix(s.Name(), s.Benchmark+"/")}
		for _, p := range s.Points {
			ts.Points = append(ts.Points, page.TrendPoint{Time: p.Time, Value: p.Value, RunID: p.RunID, Commit: p.Commit})
		}
		for _, cp := range s.ChangePoints {
			ts.Changes = append(ts.Changes, page.TrendChange{Index: cp.Index, Magnitude: cp.Magnitude})
		}
		trends[i].Series = append(trends[i].Series, ts)
	}
	return trends
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
	// Warnings receives what did not stop the history from being shown (a run whose points
	// could only be grouped by scenario name); nil discards it.
	Warnings io.Writer
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
			return finite.NewEncoder(w).Encode(infos)
		}
		return WriteRuns(w, infos)
	}
	series, err := Query(ctx, st, store.Query{Benchmark: o.Benchmark, Scenario: o.Scenario, Metric: o.Metric, Since: since, Limit: o.Limit}, o.Change)
	if err != nil && series == nil {
		return err
	}
	if err != nil && o.Warnings != nil {
		fmt.Fprintln(o.Warnings, "inferbench:", err)
	}
	switch {
	case o.Format == "html":
		return HTML(w, series, o.Metric)
	case o.Format == "json":
		enc := finite.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(series)
	case len(series) == 0:
		bench := ""
		if o.Benchmark != "" {
			bench = " for " + o.Benchmark
		}
		_, err := fmt.Fprintf(w, "no history of %s%s in the last %d days%s\n", o.Metric, bench, o.Days, suggestMetric(ctx, st, o))
		return err
	}
	for i, s := range series {
		if i > 0 {
			fmt.Fprintln(w)
		}
		WriteText(w, s, o)
	}
	return nil
}

// suggestMetric returns " (did you mean latency_ms?)" when the metric asked for is not one of
// the newest stored run's but one of those is near it (`--metric latency`), or the names it
// has when none is near; "" when the metric is one of them or nothing is stored.
func suggestMetric(ctx context.Context, st store.Store, o Options) string {
	infos, err := st.List(ctx, store.Filter{Benchmark: o.Benchmark, Limit: 1})
	if err != nil || len(infos) == 0 {
		return ""
	}
	r, err := st.Get(ctx, infos[0].ID)
	if err != nil {
		return ""
	}
	seen := map[string]bool{}
	for _, sc := range r.Scenarios {
		for name := range sc.Metrics {
			seen[name] = true
		}
	}
	names := slices.Sorted(maps.Keys(seen))
	base, stat, _ := strings.Cut(o.Metric, ".")
	if seen[base] || len(names) == 0 {
		return ""
	}
	if c := nearest.Name(base, names); c != "" {
		if stat != "" {
			c += "." + stat
		}
		return fmt.Sprintf(" (did you mean %s?)", c)
	}
	return fmt.Sprintf(" (the newest run's metrics: %s)", strings.Join(names, ", "))
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

// ShowBaselines writes the baselines of st to w in format: "text" (a table) or "json".
func ShowBaselines(ctx context.Context, w io.Writer, st store.Baselines, format string) error {
	bs, err := st.ListBaselines(ctx)
	if err != nil {
		return err
	}
	if format == "json" {
		return finite.NewEncoder(w).Encode(bs)
	}
	if len(bs) == 0 {
		_, err := fmt.Fprintln(w, "no baselines (set one with 'inferbench baseline set main')")
		return err
	}
	return WriteBaselines(w, bs)
}

// ShowBaseline writes the baseline name and its run to w in format: "text" (the summary table)
// or "json" ({"baseline": ..., "run": ...}).
func ShowBaseline(ctx context.Context, w io.Writer, st store.Store, name string, format string) error {
	b, err := st.Baseline(ctx, name)
	if err != nil {
		return err
	}
	r, err := st.Get(ctx, b.RunID)
	if err != nil {
		return err
	}
	if format == "json" {
		enc := finite.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"baseline": b, "run": r})
	}
	return WriteBaseline(w, b, r)
}

// Check reports a Format or Metric Show cannot take, naming the flag that sets it.
func (o Options) Check() error {
	switch o.Format {
	case "text", "json", "html":
	default:
		return fmt.Errorf("--format %q: want text, json or html", o.Format)
	}
	if _, _, err := store.SplitMetric(o.Metric); err != nil {
		return fmt.Errorf("--metric: %v", err)
	}
	return nil
}
