package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/inferbench/inferbench/internal/page"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// nan marks a missing point.
var nan = page.Num(math.NaN())

// Params that make the x axis, in order of preference, for each kind of benchmark.
var (
	modelAxes   = []string{"batch_size", "batch", "bs", "seq_len", "sequence_length"}
	servingAxes = []string{"concurrency", "max_concurrency", "rate", "request_rate", "qps", "rps", "input_tokens", "output_tokens"}
)

// Benchmark kinds.
const (
	kindModel   = "model"
	kindServing = "serving"
)

// kindOf says whether a benchmark's scenarios are serving runs (token streams) or iterations.
func kindOf(scs []*result.Scenario) string {
	for _, s := range scs {
		if _, ok := s.Metrics["ttft_ms"]; ok {
			return kindServing
		}
	}
	return kindModel
}

// axis picks the parameter that varies across the scenarios and is numeric: the preferred names
// first, then any other, by name. "" when none does (charts then use the scenario names).
func axis(scs []*result.Scenario, prefer []string) string {
	varying := varyingParams(scs)
	numeric := func(p string) bool {
		seen := map[float64]bool{}
		for _, s := range scs {
			v, ok := s.Params[p]
			if !ok {
				continue
			}
			f, ok := toFloat(v)
			if !ok {
				return false
			}
			seen[f] = true
		}
		return len(seen) >= 2
	}
	for _, p := range prefer {
		if varying[p] && numeric(p) {
			return p
		}
	}
	names := slices.Sorted(maps.Keys(varying))
	for _, p := range names {
		if numeric(p) {
			return p
		}
	}
	return ""
}

// varyingParams returns the parameters that take at least two values across the scenarios.
func varyingParams(scs []*result.Scenario) map[string]bool {
	vals := map[string]map[string]bool{}
	for _, s := range scs {
		for k, v := range s.Params {
			if vals[k] == nil {
				vals[k] = map[string]bool{}
			}
			vals[k][fmt.Sprint(v)] = true
		}
	}
	out := map[string]bool{}
	for k, vs := range vals {
		// A param some scenarios lack also varies.
		if len(vs) >= 2 || len(vs) == 1 && countWith(scs, k) < len(scs) {
			out[k] = true
		}
	}
	return out
}

func countWith(scs []*result.Scenario, k string) int {
	n := 0
	for _, s := range scs {
		if _, ok := s.Params[k]; ok {
			n++
		}
	}
	return n
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

// group is the scenarios that share every varying parameter but the axis: one line per group.
type group struct {
	Name string
	Scs  []*result.Scenario
}

func groups(scs []*result.Scenario, x string) []group {
	varying := varyingParams(scs)
	var keys []string
	for k := range varying {
		if k != x {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []group
	index := map[string]int{}
	for _, s := range scs {
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			if v, ok := s.Params[k]; ok {
				parts = append(parts, fmt.Sprintf("%s=%v", k, v))
			}
		}
		name := strings.Join(parts, " ")
		i, ok := index[name]
		if !ok {
			i = len(out)
			index[name] = i
			out = append(out, group{Name: name})
		}
		out[i].Scs = append(out[i].Scs, s)
	}
	if x != "" {
		for _, g := range out {
			slices.SortStableFunc(g.Scs, func(a, b *result.Scenario) int {
				fa, _ := toFloat(a.Params[x])
				fb, _ := toFloat(b.Params[x])
				switch {
				case fa < fb:
					return -1
				case fa > fb:
					return 1
				}
				return 0
			})
		}
	}
	return out
}

// plot builds the charts of one benchmark's measured scenarios.
type plot struct {
	kind   string
	x      string // the axis parameter, "" for a category axis of scenario names
	groups []group
	cats   []string
	catIdx map[string]int
	next   func() string
}

func newPlot(scs []*result.Scenario, kind string, next func() string) *plot {
	prefer := modelAxes
	if kind == kindServing {
		prefer = servingAxes
	}
	p := &plot{kind: kind, x: axis(scs, prefer), next: next}
	p.groups = groups(scs, p.x)
	if p.x == "" {
		p.catIdx = map[string]int{}
		for _, s := range scs {
			p.catIdx[s.Scenario] = len(p.cats)
			p.cats = append(p.cats, s.Scenario)
		}
	}
	return p
}

// line returns a series of get over the plot's x axis for one group; ok is false when no
// scenario had the figure.
func (p *plot) line(g group, get func(*result.Scenario) (float64, bool)) (any, bool) {
	found := false
	if p.x == "" {
		data := make([]page.Num, len(p.cats))
		for i := range data {
			data[i] = nan
		}
		for _, s := range g.Scs {
			if v, ok := get(s); ok {
				data[p.catIdx[s.Scenario]] = page.Num(v)
				found = true
			}
		}
		return data, found
	}
	var data [][2]page.Num
	for _, s := range g.Scs {
		x, _ := toFloat(s.Params[p.x])
		if v, ok := get(s); ok {
			data = append(data, [2]page.Num{page.Num(x), page.Num(v)})
			found = true
		}
	}
	return data, found
}

func (p *plot) chart(title, yName string) page.Chart {
	c := page.Chart{ID: p.next(), Title: title, Kind: "line", XName: p.x, YName: yName, Categories: p.cats}
	if p.x == "" {
		c.XName = "scenario"
	}
	return c
}

func (p *plot) label(g group, s string) string {
	if len(p.groups) > 1 && g.Name != "" {
		return g.Name + " " + s
	}
	return s
}

func percentile(name string, pick func(*stats.Summary) float64) func(*result.Scenario) (float64, bool) {
	return func(s *result.Scenario) (float64, bool) {
		m, ok := s.Metrics[name]
		if !ok || m.Summary == nil {
			return 0, false
		}
		return pick(m.Summary), true
	}
}

func center(name string) func(*result.Scenario) (float64, bool) {
	return func(s *result.Scenario) (float64, bool) {
		m, ok := s.Metrics[name]
		if !ok {
			return 0, false
		}
		return m.Center()
	}
}

var pcts = []struct {
	name   string
	pick   func(*stats.Summary) float64
	dashed bool
}{
	{"p50", func(s *stats.Summary) float64 { return s.Median }, false},
	{"p95", func(s *stats.Summary) float64 { return s.P95 }, true},
	{"p99", func(s *stats.Summary) float64 { return s.P99 }, true},
}

// percentiles charts p50/p95/p99 of a distribution metric, with the median's confidence interval.
func (p *plot) percentiles(metric, title string) (page.Chart, bool) {
	info, _ := result.Lookup(metric)
	c := p.chart(title, page.UnitName(metric, info.Unit))
	for _, g := range p.groups {
		for _, pc := range pcts {
			data, ok := p.line(g, percentile(metric, pc.pick))
			if !ok {
				continue
			}
			sr := page.Series{Name: p.label(g, pc.name), Data: data, Dashed: pc.dashed}
			if pc.name == "p50" && p.x != "" {
				for _, s := range g.Scs {
					if sum := s.Metrics[metric].Summary; sum != nil && sum.MedianCI != nil {
						x, _ := toFloat(s.Params[p.x])
						sr.Err = append(sr.Err, [3]page.Num{page.Num(x), page.Num(sum.MedianCI.Lo), page.Num(sum.MedianCI.Hi)})
					}
				}
			}
			c.Series = append(c.Series, sr)
		}
	}
	if len(c.Series) > 9 {
		c.Show = 9
	}
	return c, len(c.Series) > 0
}

// values charts single-value metrics; the second, when given, goes on a right-hand axis.
func (p *plot) values(title string, metrics ...string) (page.Chart, bool) {
	info, _ := result.Lookup(metrics[0])
	c := p.chart(title, page.UnitName(metrics[0], info.Unit))
	for i, m := range metrics {
		for _, g := range p.groups {
			data, ok := p.line(g, center(m))
			if !ok {
				continue
			}
			name := m
			if len(p.groups) > 1 {
				name = p.label(g, "")
				if len(metrics) > 1 {
					name += " " + m
				}
			}
			c.Series = append(c.Series, page.Series{Name: strings.TrimSpace(name), Data: data, Y2: i > 0, Dashed: i > 0})
			if i > 0 {
				mi, _ := result.Lookup(m)
				c.Y2Name = page.UnitName(m, mi.Unit)
			}
		}
	}
	if p.x == "" {
		c.Kind = "bar"
	}
	if len(c.Series) > 9 {
		c.Show = 9
	}
	return c, len(c.Series) > 0
}

// distribution charts one box per scenario (p25 to p75, whiskers from min to p99, the median)
// and the histogram of each scenario's raw samples.
func distribution(scs []*result.Scenario, metric string, next func() string) []page.Chart {
	info, _ := result.Lookup(metric)
	box := page.Chart{ID: next(), Title: metric + " distribution (box p25–p75, whiskers min–p99)", Kind: "boxplot", XName: "scenario", YName: page.UnitName(metric, info.Unit)}
	var boxes [][5]page.Num
	hist := page.Chart{ID: next(), Title: metric + " histogram (share of samples)", Kind: "line", XName: page.UnitName(metric, info.Unit), YName: "share"}
	for _, s := range scs {
		m, ok := s.Metrics[metric]
		if !ok || m.Summary == nil {
			continue
		}
		sum := m.Summary
		box.Categories = append(box.Categories, s.Scenario)
		boxes = append(boxes, [5]page.Num{page.Num(sum.Min), page.Num(sum.P25), page.Num(sum.Median), page.Num(sum.P75), page.Num(sum.P99)})
		if h := histogram(m.Samples, 30); h != nil {
			hist.Series = append(hist.Series, page.Series{Name: s.Scenario, Data: h, Step: true})
		}
	}
	if len(boxes) == 0 {
		return nil
	}
	box.Series = []page.Series{{Name: metric, Data: boxes}}
	out := []page.Chart{box}
	if len(hist.Series) > 0 {
		if len(hist.Series) > 6 {
			hist.Show = 6
		}
		out = append(out, hist)
	}
	return out
}

// histogram bins samples up to their 99.5th percentile (the tail would flatten the rest) into n
// equal bins and returns [bin centre, share of samples] points.
func histogram(samples []float64, n int) [][2]page.Num {
	if len(samples) < 2 {
		return nil
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	lo, hi := s[0], stats.Quantile(s, 0.995)
	if hi <= lo {
		return [][2]page.Num{{page.Num(lo), 1}}
	}
	width := (hi - lo) / float64(n)
	counts := make([]int, n)
	for _, v := range s {
		i := int((v - lo) / width)
		if i >= n {
			i = n - 1
		}
		counts[i]++
	}
	out := make([][2]page.Num, n)
	for i, c := range counts {
		out[i] = [2]page.Num{page.Num(lo + (float64(i)+0.5)*width), page.Num(float64(c) / float64(len(s)))}
	}
	return out
}

// timeline is a resource gauge over a scenario's measured window, as the monitor records it.
type timeline struct {
	Name string    `json:"name"`
	Unit string    `json:"unit"`
	T    []float64 `json:"t"`
	V    []float64 `json:"v"`
}

// timelines returns the gauges recorded in a scenario's extra sections: the monitors' (typed),
// then those of any section this version does not know that carries a "timelines" list.
func timelines(s *result.Scenario) []timeline {
	var out []timeline
	add := func(t timeline) {
		if len(t.T) == len(t.V) && len(t.T) > 0 {
			out = append(out, t)
		}
	}
	if res := s.Extra.Resources; res != nil {
		for _, t := range res.Timelines {
			add(timeline{Name: t.Name, Unit: t.Unit, T: t.T, V: t.V})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Extra.Other)) {
		var sec struct {
			Timelines []timeline `json:"timelines"`
		}
		if json.Unmarshal(s.Extra.Other[k], &sec) == nil {
			for _, t := range sec.Timelines {
				add(t)
			}
		}
	}
	return out
}

// maxTimelinePoints bounds the points of one scenario's gauge in a page (a report of hundreds of
// scenarios must stay small).
const maxTimelinePoints = 120

// timelineCharts charts each gauge over time, one line per scenario; GPU gauges first get their own.
func timelineCharts(scs []*result.Scenario, next func() string) []page.Chart {
	byName := map[string]*page.Chart{}
	var order []string
	for _, s := range scs {
		for _, t := range timelines(s) {
			c, ok := byName[t.Name]
			if !ok {
				title := "resource: " + t.Name
				if strings.Contains(strings.ToLower(t.Name), "gpu") {
					title = "GPU: " + t.Name
				}
				c = &page.Chart{ID: "", Title: title, Kind: "line", XName: "seconds into the measured window", YName: page.UnitName(t.Name, t.Unit)}
				byName[t.Name] = c
				order = append(order, t.Name)
			}
			step := max(1, (len(t.T)+maxTimelinePoints-1)/maxTimelinePoints)
			data := make([][2]page.Num, 0, len(t.T)/step+1)
			for i := 0; i < len(t.T); i += step {
				data = append(data, [2]page.Num{page.Num(t.T[i]), page.Num(t.V[i])})
			}
			c.Series = append(c.Series, page.Series{Name: s.Scenario, Data: data})
		}
	}
	// GPU gauges first, then the rest, each by name.
	sort.SliceStable(order, func(a, b int) bool {
		ga, gb := strings.Contains(strings.ToLower(order[a]), "gpu"), strings.Contains(strings.ToLower(order[b]), "gpu")
		if ga != gb {
			return ga
		}
		return order[a] < order[b]
	})
	out := make([]page.Chart, 0, len(order))
	for _, name := range order {
		c := byName[name]
		c.ID = next()
		if len(c.Series) > 6 {
			c.Show = 6
		}
		out = append(out, *c)
	}
	return out
}

// benchmarkCharts returns the charts that fit a benchmark's kind, from its measured scenarios.
func benchmarkCharts(scs []*result.Scenario, kind string, next func() string) []page.Chart {
	var measured []*result.Scenario
	for _, s := range scs {
		if len(s.Metrics) > 0 && s.Status != result.StatusSkipped {
			measured = append(measured, s)
		}
	}
	if len(measured) == 0 {
		return nil
	}
	p := newPlot(measured, kind, next)
	var out []page.Chart
	add := func(c page.Chart, ok bool) {
		if ok {
			out = append(out, c)
		}
	}
	head := "latency_ms"
	switch kind {
	case kindServing:
		head = "e2e_ms"
		add(p.percentiles("ttft_ms", "TTFT percentiles"))
		add(p.percentiles("itl_ms", "ITL percentiles"))
		add(p.percentiles("tpot_ms", "TPOT percentiles"))
		add(p.percentiles("e2e_ms", "end-to-end latency percentiles"))
		add(p.values("throughput", "output_tokens_per_s", "requests_per_s"))
		add(p.values("goodput", "goodput_rps"))
	default:
		add(p.percentiles("latency_ms", "latency percentiles"))
		add(p.values("throughput", "throughput_ips"))
		add(p.values("memory", "memory_mb", "gpu_memory_mb"))
	}
	out = append(out, distribution(measured, head, next)...)
	if kind == kindServing {
		out = append(out, capacityCharts(measured, next)...)
		for _, s := range measured {
			add(sliceChart(s, next))
		}
		for _, s := range measured {
			add(turnChart(s, next))
		}
	}
	out = append(out, timelineCharts(measured, next)...)
	return out
}
