package report

import (
	"fmt"

	"github.com/inferbench/inferbench/internal/capacity"
	"github.com/inferbench/inferbench/internal/page"
	"github.com/inferbench/inferbench/result"
)

// capacityCharts draws, per scenario of a capacity search, each objective's attainment against
// the arrival rate: every step's attainment with its interval at the last look (points), the
// isotonic fit the estimate reads (a line), the objective's target (dashed), and the knee: the
// capacity and its lower bound as vertical marks.
func capacityCharts(scs []*result.Scenario, next func() string) []page.Chart {
	var out []page.Chart
	for _, s := range scs {
		var res capacity.Result
		if !section(s, capacity.Section, &res) || len(res.Steps) == 0 || len(res.Curve) != len(res.Objectives) {
			continue
		}
		c := page.Chart{ID: next(), Title: "capacity: attainment against rate: " + s.Scenario, Kind: "line",
			XName: "arrival rate (requests/s)", YName: "attainment (share of requests within the SLO)"}
		lo, hi := res.Steps[0].Rate, res.Steps[0].Rate
		for _, st := range res.Steps {
			lo, hi = min(lo, st.Rate), max(hi, st.Rate)
		}
		for j, o := range res.Objectives {
			color := palette[j%len(palette)]
			var pts [][2]page.Num
			var errs [][3]page.Num
			for _, st := range res.Steps {
				if j >= len(st.Estimates) {
					continue
				}
				e := st.Estimates[j]
				pts = append(pts, [2]page.Num{page.Num(st.Rate), page.Num(e.Attainment)})
				errs = append(errs, [3]page.Num{page.Num(st.Rate), page.Num(max(e.Lower, 0)), page.Num(min(e.Upper, 1))})
			}
			c.Series = append(c.Series, page.Series{Name: o.Name + " steps", Data: pts, Type: "scatter", Err: errs, Color: color})
			fit := make([][2]page.Num, 0, len(res.Curve[j]))
			for _, p := range res.Curve[j] {
				fit = append(fit, [2]page.Num{page.Num(p.Rate), page.Num(p.Attainment)})
			}
			c.Series = append(c.Series, page.Series{Name: o.Name + " fit", Data: fit, Color: color})
			c.Series = append(c.Series, page.Series{Name: fmt.Sprintf("%s target %.4g", o.Name, o.Target), Data: [][2]page.Num{{page.Num(lo), page.Num(o.Target)}, {page.Num(hi), page.Num(o.Target)}}, Dashed: true, Color: color})
		}
		c.Marks = []page.Mark{{X: page.Num(res.CapacityRPS), Label: fmt.Sprintf("capacity %.4g req/s", res.CapacityRPS)}}
		if res.LowerRPS > 0 {
			c.Marks = append(c.Marks, page.Mark{X: page.Num(res.LowerRPS), Label: fmt.Sprintf("95%% lower bound %.4g", res.LowerRPS)})
		}
		out = append(out, c)
	}
	return out
}

// palette are the colours of a capacity chart's objectives.
var palette = []string{colorTTFT, colorE2E, colorTPOT, "#9467bd", "#8c564b"}
