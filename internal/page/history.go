package page

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"time"
)

// Trend is the history of one metric statistic: one series per scenario.
type Trend struct {
	Benchmark string
	Metric    string // "latency_ms.p95"
	Unit      string
	Series    []TrendSeries
}

// TrendSeries is one scenario's points, oldest first, and the change points found in them.
type TrendSeries struct {
	Name    string
	Points  []TrendPoint
	Changes []TrendChange
}

// TrendPoint is one run's value.
type TrendPoint struct {
	Time   time.Time
	Value  float64
	RunID  string
	Commit string
}

// TrendChange is a detected shift: the index of the first point after it and its relative size.
type TrendChange struct {
	Index     int
	Magnitude float64
}

type historyView struct {
	Trends []trendView
}

type trendView struct {
	Trend
	Anchor  string
	ChartID string
	Changes []changeRow
}

type changeRow struct {
	Series, RunID, Commit string
	Time                  time.Time
	Magnitude             float64
}

// HistoryPage builds the page of trends: each metric over time, one line per scenario, with its
// change points marked, and a table of the shifts.
func HistoryPage(trends []Trend) (Page, error) {
	var v historyView
	var charts []Chart
	for i, t := range trends {
		tv := trendView{Trend: t, Anchor: fmt.Sprintf("t%d", i+1), ChartID: fmt.Sprintf("c%d", i+1)}
		c := Chart{ID: tv.ChartID, Title: t.Benchmark + " " + t.Metric, Kind: "line", XTime: true, XName: "run time", YName: UnitName(t.Metric, t.Unit)}
		for _, s := range t.Series {
			data := make([][2]Num, len(s.Points))
			for j, p := range s.Points {
				data[j] = [2]Num{Num(p.Time.UnixMilli()), Num(p.Value)}
			}
			sr := Series{Name: s.Name, Data: data}
			for _, ch := range s.Changes {
				if ch.Index <= 0 || ch.Index >= len(s.Points) {
					continue
				}
				p := s.Points[ch.Index]
				sr.Marks = append(sr.Marks, Mark{X: Num(p.Time.UnixMilli()), Label: fmt.Sprintf("%+.0f%%", 100*ch.Magnitude)})
				tv.Changes = append(tv.Changes, changeRow{Series: s.Name, RunID: p.RunID, Commit: p.Commit, Time: p.Time, Magnitude: ch.Magnitude})
			}
			c.Series = append(c.Series, sr)
		}
		if len(c.Series) > 8 {
			c.Show = 8
		}
		charts = append(charts, c)
		v.Trends = append(v.Trends, tv)
	}
	var body bytes.Buffer
	if err := bodyTmpl.ExecuteTemplate(&body, "history", v); err != nil {
		return Page{}, err
	}
	return Page{Title: "inferbench history", Body: template.HTML(body.String()), Charts: charts}, nil
}

// HistoryHTML writes the trends page as one self-contained file.
func HistoryHTML(w io.Writer, trends []Trend) error {
	p, err := HistoryPage(trends)
	if err != nil {
		return err
	}
	return WritePage(w, p)
}
