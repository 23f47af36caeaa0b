package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/page"
	"github.com/inferbench/inferbench/result"
)

// delta is one row of a compare page: one metric of one scenario in two runs, with its verdict.
// deltasOf makes them from a compare.Report.
type delta struct {
	Benchmark string
	Scenario  string
	Metric    string
	Base      float64
	Head      float64
	// Change is Head/Base - 1; nil when there is none (Base is 0), and NoChange says why.
	Change   *float64
	NoChange string
	// Lo and Hi bound Change at 95% confidence, when known.
	Lo *float64
	Hi *float64
	// Verdict is one of compare's: regression, worse, unchanged, better, improvement,
	// unverified, info, changed, unknown.
	Verdict string
	// Gated: the metric can fail the comparison (compare.Row.Gated). Mark is compare.Row.Mark:
	// "fail" on the rows that fail it, "untested", "info", "improvement" or "".
	Gated bool
	Mark  string
	Note  string
}

// deltasOf turns a comparison into page rows, with a line saying how verdicts were reached.
func deltasOf(rep *compare.Report) ([]delta, string) {
	out := make([]delta, 0, len(rep.Rows))
	for _, r := range rep.Rows {
		d := delta{Benchmark: r.Benchmark, Scenario: r.Scenario, Metric: r.Metric,
			Base: r.Old, Head: r.New, Verdict: r.Verdict, Gated: r.Gated, Mark: r.Mark(), Note: strings.Join(r.Warnings, "; ")}
		if r.ThresholdRuns > 0 {
			d.Note = strings.TrimSuffix(fmt.Sprintf("threshold %s from %d runs; %s", pctText(r.Threshold), r.ThresholdRuns, d.Note), "; ")
		}
		if pct, ok, why := r.Change(); ok {
			c := pct / 100
			d.Change = &c
		} else {
			d.NoChange = why
		}
		switch {
		case d.Change == nil:
		case r.DeltaCI != nil:
			lo, hi := r.DeltaCI.Lo/100, r.DeltaCI.Hi/100
			d.Lo, d.Hi = &lo, &hi
		case r.OldCI != nil && r.NewCI != nil && r.OldCI.Lo > 0 && r.OldCI.Hi > 0:
			// The ratio of the two medians' intervals: wider than the test's, never narrower.
			lo, hi := r.NewCI.Lo/r.OldCI.Hi-1, r.NewCI.Hi/r.OldCI.Lo-1
			d.Lo, d.Hi = &lo, &hi
		}
		if d.Lo != nil && !(isFinite(*d.Lo) && isFinite(*d.Hi)) {
			d.Lo, d.Hi = nil, nil
		}
		out = append(out, d)
	}
	method := fmt.Sprintf("a regression is significant (Mann-Whitney U or bootstrap, false discovery rate %.0f%%) and worse than its threshold, on a gated metric (each scenario's primary metrics, the figures its code reports and --gate)", 100*rep.Alpha)
	return out, method
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// compareView is what templates/compare.tmpl shows. The counts and the status are the
// compare.Report's, as every other rendering of it shows them.
type compareView struct {
	Base, Head *result.Run
	BaseHref   string
	HeadHref   string
	Method     string
	Warnings   []string
	Status     string // statusWord: "ok", "FAIL", "UNKNOWN" or "UNTESTED"
	Rep        *compare.Report
	Budgets    []compare.BudgetCheck // exceeded
	Benchmarks []compareBench
}

type compareBench struct {
	Name, Anchor string
	Rows         []delta
	Charts       []page.Chart
}

// headline metrics get a chart of their change per scenario in a compare page.
var headline = []string{"latency_ms", "throughput_ips", "ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "output_tokens_per_s", "memory_mb"}

// CompareOptions adjust a compare page.
type CompareOptions struct {
	HTMLOptions
	// Method says how verdicts were reached, shown under the title.
	Method string
	// Warnings are the comparison's caveats (environment differences, partial runs).
	Warnings []string
}

// comparePage builds the page of comparison rep of head with base: its status and counts, per
// benchmark the change of each headline metric per scenario as a bar with its confidence interval
// (red where it fails), the table of every delta, and the exceeded budgets. opts.Method and
// opts.Warnings default to rep's.
func comparePage(base, head *result.Run, rep *compare.Report, opts CompareOptions) (page.Page, error) {
	n := 0
	next := func() string { n++; return fmt.Sprintf("c%d", n) }
	deltas, method := deltasOf(rep)
	if opts.Method == "" {
		opts.Method = method
	}
	if opts.Warnings == nil {
		if rep.NoEvidence != "" {
			opts.Warnings = append(opts.Warnings, "FAIL: nothing comparable: "+rep.NoEvidence)
		}
		opts.Warnings = append(opts.Warnings, rep.Warnings...)
	}
	v := compareView{Base: base, Head: head, Method: opts.Method, Warnings: opts.Warnings, Rep: rep, Status: statusWord(rep)}
	if v.Status == "UNKNOWN" || v.Status == "UNTESTED" {
		v.Warnings = append([]string{headlineOf(rep)}, v.Warnings...)
	}
	for _, b := range rep.Budgets {
		if b.Measured && !b.OK {
			v.Budgets = append(v.Budgets, b)
		}
	}
	if opts.RunHref != nil {
		v.BaseHref, v.HeadHref = opts.RunHref(base.ID), opts.RunHref(head.ID)
	}
	idx := map[string]int{}
	for _, d := range deltas {
		i, ok := idx[d.Benchmark]
		if !ok {
			i = len(v.Benchmarks)
			idx[d.Benchmark] = i
			v.Benchmarks = append(v.Benchmarks, compareBench{Name: d.Benchmark, Anchor: fmt.Sprintf("b%d", i+1)})
		}
		v.Benchmarks[i].Rows = append(v.Benchmarks[i].Rows, d)
	}
	var charts []page.Chart
	for i := range v.Benchmarks {
		b := &v.Benchmarks[i]
		for _, m := range headline {
			c := page.Chart{ID: "", Title: m + ": change of head against base, with 95% intervals", Kind: "bar", XName: "scenario", YName: "change (%)"}
			var data []barPoint
			var errs [][3]page.Num
			for _, d := range b.Rows {
				if d.Metric != m || d.Change == nil {
					continue
				}
				color := "#8c959f"
				switch {
				case d.Mark == "fail":
					color = "#cf222e"
				case d.Verdict == compare.Worse, d.Verdict == compare.Unverified, d.Verdict == compare.Info, d.Verdict == compare.Disagree:
					color = "#e8a19a"
				case d.Verdict == compare.Better:
					color = "#9fd8ab"
				case d.Verdict == compare.Improvement:
					color = "#1a7f37"
				}
				c.Categories = append(c.Categories, d.Scenario)
				data = append(data, barPoint{Value: page.Num(100 * *d.Change), ItemStyle: itemStyle{Color: color}})
				if d.Lo != nil && d.Hi != nil {
					errs = append(errs, [3]page.Num{page.Num(len(data) - 1), page.Num(100 * *d.Lo), page.Num(100 * *d.Hi)})
				}
			}
			moved := false
			for _, p := range data {
				moved = moved || p.Value != 0
			}
			if !moved {
				continue // nothing changed: no chart
			}
			c.ID = next()
			c.Series = []page.Series{{Name: m, Data: data, Err: errs}}
			b.Charts = append(b.Charts, c)
			charts = append(charts, c)
		}
	}
	var body bytes.Buffer
	if err := bodyTmpl.ExecuteTemplate(&body, "compare", v); err != nil {
		return page.Page{}, err
	}
	body.WriteString(string(opts.Explain)) // the regressed scenarios' explanations, with their flame graphs
	return page.Page{Title: fmt.Sprintf("inferbench compare %s → %s", base.ID, head.ID), Nav: navOf(opts.Nav), Body: template.HTML(body.String()), Charts: charts, AssetBase: opts.AssetBase}, nil
}

type barPoint struct {
	Value     page.Num  `json:"value"`
	ItemStyle itemStyle `json:"itemStyle"`
}

type itemStyle struct {
	Color string `json:"color"`
}

// CompareHTML writes the compare page as one self-contained file.
func CompareHTML(w io.Writer, base, head *result.Run, rep *compare.Report, opts CompareOptions) error {
	p, err := comparePage(base, head, rep, opts)
	if err != nil {
		return err
	}
	return page.WritePage(w, p)
}
