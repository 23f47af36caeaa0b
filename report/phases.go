package report

import (
	"encoding/json"
	"strconv"

	"github.com/inferbench/inferbench/internal/page"
	"github.com/inferbench/inferbench/result"
)

// section decodes a scenario's extra section name, one result does not type, into v; false
// when absent or unreadable.
func section(s *result.Scenario, name string, v any) bool {
	raw, ok := s.Extra.Other[name]
	return ok && json.Unmarshal(raw, v) == nil
}

// maxSlicePoints bounds the slices of one scenario drawn in a page, as maxTimelinePoints bounds
// a gauge: a longer run keeps every n-th slice. Seven series of 60 points are ~5 KB, what a
// scenario's three timelines take; 60 is ten minutes of the default 10 s slices.
const maxSlicePoints = 60

// sliceMetrics are the figures drawn per slice, each at p50 (solid) and p99 (dashed) in one
// colour; run.json also has p90.
var sliceMetrics = []struct{ key, label, color string }{{"ttft_ms", "TTFT", colorTTFT}, {"tpot_ms", "TPOT", colorTPOT}, {"e2e_ms", "E2E", colorE2E}}

// The colours of a figure's p50 and p99 lines in the slice and turn charts, and of requests/s.
const (
	colorTTFT = "#1f77b4"
	colorTPOT = "#2ca02c"
	colorE2E  = "#9467bd"
	colorRate = "#999999"
)

// sliceChart charts a scenario's time slices: their TTFT, TPOT and end-to-end p50 and p99 at
// each slice's middle, on a log axis (TTFT and TPOT are often a hundredth of E2E), with the
// slices' requests/s on the right; false for a scenario with fewer than two slices.
func sliceChart(s *result.Scenario, next func() string) (page.Chart, bool) {
	sl := s.Extra.Slices
	if len(sl) < 2 {
		return page.Chart{}, false
	}
	step := max(1, (len(sl)+maxSlicePoints-1)/maxSlicePoints)
	c := page.Chart{ID: next(), Title: "time slices: " + s.Scenario, Kind: "line", XName: "seconds into the measured phase",
		YName: "ms (log)", YLog: true, Y2Name: "requests/s"}
	for _, m := range sliceMetrics {
		for _, pc := range []string{"p50", "p99"} {
			data := make([][2]page.Num, 0, len(sl)/step+1)
			found := false
			for i := 0; i < len(sl); i += step {
				v, ok := sl[i].Quantiles[m.key+"."+pc]
				if ok && v > 0 { // a log axis has no zero
					found = true
				} else {
					v = float64(nan)
				}
				data = append(data, [2]page.Num{page.Num((sl[i].StartS + sl[i].EndS) / 2), page.Num(v)})
			}
			if found {
				c.Series = append(c.Series, page.Series{Name: m.label + " " + pc, Data: data, Dashed: pc == "p99", Color: m.color})
			}
		}
	}
	rps := make([][2]page.Num, 0, len(sl)/step+1)
	for i := 0; i < len(sl); i += step {
		rps = append(rps, [2]page.Num{page.Num((sl[i].StartS + sl[i].EndS) / 2), page.Num(sl[i].RPS)})
	}
	c.Series = append(c.Series, page.Series{Name: "requests/s", Data: rps, Y2: true, Step: true, Color: colorRate})
	return c, true
}

// turnChart charts a scenario of multi-turn sessions: each turn's TTFT and end-to-end p50 and
// p99 (history grows with the turn, and so does the prompt the server reads); false for a
// scenario with fewer than two turns, or none with a figure.
func turnChart(s *result.Scenario, next func() string) (page.Chart, bool) {
	ts := s.Extra.Turns
	if len(ts) < 2 {
		return page.Chart{}, false
	}
	c := page.Chart{ID: next(), Title: "turns: " + s.Scenario, Kind: "line", XName: "turn", YName: "ms (log)", YLog: true}
	series := []struct {
		name, color string
		pick        func(result.TurnStat) float64
		dashed      bool
	}{
		{"TTFT p50", colorTTFT, func(t result.TurnStat) float64 { return t.TTFTP50 }, false},
		{"TTFT p99", colorTTFT, func(t result.TurnStat) float64 { return t.TTFTP99 }, true},
		{"E2E p50", colorE2E, func(t result.TurnStat) float64 { return t.E2EP50 }, false},
		{"E2E p99", colorE2E, func(t result.TurnStat) float64 { return t.E2EP99 }, true},
	}
	for _, t := range ts {
		c.Categories = append(c.Categories, strconv.Itoa(t.Turn))
	}
	for _, sr := range series {
		data := make([]page.Num, len(ts))
		found := false
		for i, t := range ts {
			data[i] = nan
			if v := sr.pick(t); v > 0 { // 0: no request of the turn had the figure
				data[i], found = page.Num(v), true
			}
		}
		if found {
			c.Series = append(c.Series, page.Series{Name: sr.name, Data: data, Dashed: sr.dashed, Color: sr.color})
		}
	}
	return c, len(c.Series) > 0
}
