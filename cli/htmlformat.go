package cli

import (
	"io"
	"strings"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
)

// compareHTML writes `compare --format html`: the self-contained compare page.
func compareHTML(w io.Writer, old, nw *result.Run, rep *compare.Report) error {
	deltas, method := report.DeltasOf(rep)
	return report.CompareHTML(w, old, nw, deltas, report.CompareOptions{Method: method, Warnings: rep.Warnings})
}

// historyHTML writes `history --format html`: one trend chart per benchmark, a line per
// scenario, change points marked.
func historyHTML(w io.Writer, series []Series, metric string) error {
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
		ts := report.TrendSeries{Name: strings.TrimPrefix(s.Name(), s.Benchmark+"/")}
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
