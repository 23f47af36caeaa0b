package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"time"

	"github.com/inferbench/inferbench/result"
)

// Delta is one metric of one scenario in two runs, with the verdict of a comparison. The compare
// package decides verdicts; SimpleDeltas is the fallback this package uses on its own.
type Delta struct {
	Benchmark string `json:"benchmark"`
	Scenario  string `json:"scenario"`
	Metric    string `json:"metric"`
	Unit      string `json:"unit"`
	Better    string `json:"better"`
	Base      float64 `json:"base"`
	Head      float64 `json:"head"`
	// Change is Head/Base - 1.
	Change float64 `json:"change"`
	// Lo and Hi bound Change at 95% confidence, when known.
	Lo *float64 `json:"lo,omitempty"`
	Hi *float64 `json:"hi,omitempty"`
	// P is the p-value of the test, when one was run.
	P *float64 `json:"p,omitempty"`
	// Verdict is "regression", "improvement", "~" (no significant change), "new" or "gone".
	Verdict string `json:"verdict"`
	Note    string `json:"note,omitempty"`
}

// Verdicts.
const (
	Regression  = "regression"
	Improvement = "improvement"
	Same        = "~"
	New         = "new"
	Gone        = "gone"
)

// Thresholds of SimpleDeltas, as docs/metrics.md gives the defaults: a change smaller than these
// is "~" even when significant.
func threshold(name, unit string, better result.Direction) float64 {
	switch {
	case better == result.Higher:
		return 0.10
	case unit == "MB":
		return 0.20
	}
	return 0.15
}

// SimpleDeltas compares the metrics two runs share, scenario by scenario. A distribution's change
// is significant when the 95% confidence intervals of the two medians do not overlap (a
// conservative test); a single value has no test and is judged by its threshold alone.
func SimpleDeltas(base, head *result.Run) []Delta {
	type key struct{ b, s string }
	baseBy := map[key]*result.Scenario{}
	for i := range base.Scenarios {
		s := &base.Scenarios[i]
		baseBy[key{s.Benchmark, s.Scenario}] = s
	}
	var out []Delta
	seen := map[key]bool{}
	for i := range head.Scenarios {
		h := &head.Scenarios[i]
		k := key{h.Benchmark, h.Scenario}
		seen[k] = true
		b, ok := baseBy[k]
		if !ok {
			if h.Status == result.StatusOK {
				out = append(out, Delta{Benchmark: h.Benchmark, Scenario: h.Scenario, Verdict: New, Note: "not in the base run"})
			}
			continue
		}
		names := make([]string, 0, len(h.Metrics))
		for n := range h.Metrics {
			if _, ok := b.Metrics[n]; ok {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			if d, ok := delta(b, h, n); ok {
				out = append(out, d)
			}
		}
	}
	for i := range base.Scenarios {
		s := &base.Scenarios[i]
		if k := (key{s.Benchmark, s.Scenario}); !seen[k] && s.Status == result.StatusOK {
			out = append(out, Delta{Benchmark: s.Benchmark, Scenario: s.Scenario, Verdict: Gone, Note: "not in the head run"})
		}
	}
	return out
}

func delta(b, h *result.Scenario, name string) (Delta, bool) {
	bm, hm := b.Metrics[name], h.Metrics[name]
	bv, ok1 := bm.Center()
	hv, ok2 := hm.Center()
	if !ok1 || !ok2 || bv == 0 {
		return Delta{}, false
	}
	info, _ := result.Lookup(name)
	better := info.Better
	if hm.Better != "" {
		better = result.Direction(hm.Better)
	}
	d := Delta{Benchmark: h.Benchmark, Scenario: h.Scenario, Metric: name, Unit: info.Unit, Better: string(better),
		Base: bv, Head: hv, Change: hv/bv - 1}
	significant := true
	if bm.Summary != nil && hm.Summary != nil {
		if bc, hc := bm.Summary.MedianCI, hm.Summary.MedianCI; bc != nil && hc != nil && bc.Lo > 0 && bc.Hi > 0 {
			lo, hi := hc.Lo/bc.Hi-1, hc.Hi/bc.Lo-1
			d.Lo, d.Hi = &lo, &hi
			significant = hc.Lo > bc.Hi || hc.Hi < bc.Lo
		} else {
			significant = false
			d.Note = "too few samples for an interval"
		}
	} else {
		d.Note = "single value: judged by threshold only"
	}
	worse := d.Change > 0
	if better == result.Higher {
		worse = d.Change < 0
	}
	switch {
	case !significant || math.Abs(d.Change) < threshold(name, info.Unit, better):
		d.Verdict = Same
	case worse:
		d.Verdict = Regression
	default:
		d.Verdict = Improvement
	}
	return d, true
}

// compareView is what templates/compare.tmpl shows.
type compareView struct {
	Base, Head   *result.Run
	BaseHref     string
	HeadHref     string
	Method       string
	Regressions  int
	Improvements int
	Benchmarks   []compareBench
}

type compareBench struct {
	Name, Anchor string
	Rows         []Delta
	Charts       []Chart
}

// headline metrics get a chart of their change per scenario in a compare page.
var headline = []string{"latency_ms", "throughput_ips", "ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "output_tokens_per_s", "memory_mb"}

// CompareOptions adjust a compare page.
type CompareOptions struct {
	HTMLOptions
	// Method says how verdicts were reached, shown under the title.
	Method string
}

// ComparePage builds the page comparing head with base: per benchmark, the change of each headline
// metric per scenario as a bar with its confidence interval (red worse, green better), and the
// table of every delta.
func ComparePage(base, head *result.Run, deltas []Delta, opts CompareOptions) (Page, error) {
	n := 0
	next := func() string { n++; return fmt.Sprintf("c%d", n) }
	v := compareView{Base: base, Head: head, Method: opts.Method}
	if opts.RunHref != nil {
		v.BaseHref, v.HeadHref = opts.RunHref(base.ID), opts.RunHref(head.ID)
	}
	idx := map[string]int{}
	for _, d := range deltas {
		switch d.Verdict {
		case Regression:
			v.Regressions++
		case Improvement:
			v.Improvements++
		}
		i, ok := idx[d.Benchmark]
		if !ok {
			i = len(v.Benchmarks)
			idx[d.Benchmark] = i
			v.Benchmarks = append(v.Benchmarks, compareBench{Name: d.Benchmark, Anchor: fmt.Sprintf("b%d", i+1)})
		}
		v.Benchmarks[i].Rows = append(v.Benchmarks[i].Rows, d)
	}
	var charts []Chart
	for i := range v.Benchmarks {
		b := &v.Benchmarks[i]
		for _, m := range headline {
			c := Chart{ID: "", Title: m + ": change of head against base (95% CI)", Kind: "bar", XName: "scenario", YName: "change (%)"}
			var data []barPoint
			var errs [][3]Num
			for _, d := range b.Rows {
				if d.Metric != m {
					continue
				}
				color := "#8c959f"
				switch d.Verdict {
				case Regression:
					color = "#cf222e"
				case Improvement:
					color = "#1a7f37"
				}
				c.Categories = append(c.Categories, d.Scenario)
				data = append(data, barPoint{Value: Num(100 * d.Change), ItemStyle: itemStyle{Color: color}})
				if d.Lo != nil && d.Hi != nil {
					errs = append(errs, [3]Num{Num(len(data) - 1), Num(100 * *d.Lo), Num(100 * *d.Hi)})
				}
			}
			if len(data) == 0 {
				continue
			}
			c.ID = next()
			c.Series = []Series{{Name: m, Data: data, Err: errs}}
			b.Charts = append(b.Charts, c)
			charts = append(charts, c)
		}
	}
	var body bytes.Buffer
	if err := bodyTmpl.ExecuteTemplate(&body, "compare", v); err != nil {
		return Page{}, err
	}
	return Page{Title: fmt.Sprintf("inferbench compare %s → %s", base.ID, head.ID), Nav: opts.Nav, Body: template.HTML(body.String()), Charts: charts, AssetBase: opts.AssetBase}, nil
}

type barPoint struct {
	Value     Num       `json:"value"`
	ItemStyle itemStyle `json:"itemStyle"`
}

type itemStyle struct {
	Color string `json:"color"`
}

// CompareHTML writes the compare page as one self-contained file.
func CompareHTML(w io.Writer, base, head *result.Run, deltas []Delta, opts CompareOptions) error {
	p, err := ComparePage(base, head, deltas, opts)
	if err != nil {
		return err
	}
	return WritePage(w, p)
}

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
func HistoryPage(trends []Trend, opts HTMLOptions) (Page, error) {
	var v historyView
	var charts []Chart
	for i, t := range trends {
		tv := trendView{Trend: t, Anchor: fmt.Sprintf("t%d", i+1), ChartID: fmt.Sprintf("c%d", i+1)}
		c := Chart{ID: tv.ChartID, Title: t.Benchmark + " " + t.Metric, Kind: "line", XTime: true, XName: "run time", YName: unitName(t.Metric, t.Unit)}
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
	return Page{Title: "inferbench history", Nav: opts.Nav, Body: template.HTML(body.String()), Charts: charts, AssetBase: opts.AssetBase}, nil
}

// HistoryHTML writes the trends page as one self-contained file.
func HistoryHTML(w io.Writer, trends []Trend, opts HTMLOptions) error {
	p, err := HistoryPage(trends, opts)
	if err != nil {
		return err
	}
	return WritePage(w, p)
}
