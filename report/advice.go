package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/inferbench/inferbench/result"
)

// advice is one thing a reader of a run should know or try: a sweet spot in a sweep, a noisy
// scenario, a failure, a flagged resource trend.
type advice struct {
	Level string `json:"level"` // "info", "warn" or "error"
	Scope string `json:"scope"` // benchmark or benchmark/scenario
	Text  string `json:"text"`
}

// Thresholds of the sweep advice.
const (
	kneeGain     = 0.10 // a step that adds less throughput than this ...
	kneeCost     = 0.20 // ... while p95 latency rises more than this is past the knee
	saturatedAt  = 0.95 // share of the best throughput that counts as saturated
	maxAdviceLen = 200  // warnings beyond this many are counted, not listed
)

// runAdvice derives the advice of a run: per benchmark, the sweet spot of a batch-size or load
// sweep; per scenario, its failures, warnings and flagged monitor findings.
func runAdvice(r *result.Run) []advice {
	var out []advice
	for _, b := range byBenchmark(r) {
		kind := kindOf(b.scs)
		var measured []*result.Scenario
		for _, s := range b.scs {
			if s.Status == result.StatusOK {
				measured = append(measured, s)
			}
		}
		if len(measured) >= 2 {
			if kind == kindServing {
				out = append(out, servingAdvice(b.name, measured)...)
			} else {
				out = append(out, modelAdvice(b.name, measured)...)
			}
		}
	}
	var notes []advice
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		switch {
		case s.Status == result.StatusFailed:
			notes = append(notes, advice{"error", s.ID(), "failed: " + s.Error})
		case s.Status == result.StatusSkipped:
			notes = append(notes, advice{"info", s.ID(), "skipped: " + s.SkipReason})
		}
		for _, w := range s.Warnings {
			level := "warn"
			if result.IsExpected(w) {
				level = "info" // an expected effect, said once, not an alarm
			}
			notes = append(notes, advice{level, s.ID(), w})
		}
		for _, f := range flagged(s) {
			notes = append(notes, advice{"warn", s.ID(), f})
		}
	}
	// What matters first: failures, then warnings, then skips and expected effects.
	slices.SortStableFunc(notes, func(a, b advice) int { return levelRank[a.Level] - levelRank[b.Level] })
	if len(notes) > maxAdviceLen {
		extra := len(notes) - maxAdviceLen
		notes = append(notes[:maxAdviceLen], advice{"info", "", fmt.Sprintf("%d more notes; see run.json", extra)})
	}
	return append(out, notes...)
}

// levelRank orders advice levels by severity.
var levelRank = map[string]int{"error": 0, "warn": 1, "info": 2}

func modelAdvice(bench string, scs []*result.Scenario) []advice {
	x, groups := swept(scs, kindModel)
	var out []advice
	for _, g := range groups {
		best, bestV := peak(g.Scs, "throughput_ips")
		if best == nil {
			continue
		}
		text := fmt.Sprintf("throughput peaks at %s items/s with %s=%v%s", num(bestV), x, best.Params[x], groupSuffix(g))
		if lat := best.Metrics["latency_ms"].Summary; lat != nil {
			text += fmt.Sprintf("; p95 latency there is %s ms", num(lat.P95))
		}
		out = append(out, advice{"info", bench, text})
		for i := 1; i < len(g.Scs); i++ {
			a, b := g.Scs[i-1], g.Scs[i]
			ta, ok1 := a.Metrics["throughput_ips"].Center()
			tb, ok2 := b.Metrics["throughput_ips"].Center()
			la, lb := a.Metrics["latency_ms"].Summary, b.Metrics["latency_ms"].Summary
			if !ok1 || !ok2 || la == nil || lb == nil || ta <= 0 || la.P95 <= 0 {
				continue
			}
			gain, cost := tb/ta-1, lb.P95/la.P95-1
			if gain < kneeGain && cost > kneeCost {
				out = append(out, advice{"info", bench, fmt.Sprintf(
					"past %s=%v%s, raising %s to %v changes throughput by %+.0f%% and p95 latency by %+.0f%%: %s=%v is the knee",
					x, a.Params[x], groupSuffix(g), x, b.Params[x], 100*gain, 100*cost, x, a.Params[x])})
				break
			}
		}
	}
	return out
}

// peak returns the scenario with the highest positive centre of metric, and that centre; nil
// and 0 when none has one.
func peak(scs []*result.Scenario, metric string) (*result.Scenario, float64) {
	best, bestV := (*result.Scenario)(nil), 0.0
	for _, s := range scs {
		if v, ok := s.Metrics[metric].Center(); ok && v > bestV {
			best, bestV = s, v
		}
	}
	return best, bestV
}

// groupSuffix names a sweep's group in parentheses after a value, or is empty for the only group.
func groupSuffix(g group) string {
	if g.Name == "" {
		return ""
	}
	return " (" + g.Name + ")"
}

func servingAdvice(bench string, scs []*result.Scenario) []advice {
	x, groups := swept(scs, kindServing)
	var out []advice
	for _, g := range groups {
		_, bestV := peak(g.Scs, "output_tokens_per_s")
		if bestV <= 0 {
			continue
		}
		first := g.Scs[0]
		for _, s := range g.Scs {
			v, _ := s.Metrics["output_tokens_per_s"].Center()
			if v < saturatedAt*bestV {
				continue
			}
			text := fmt.Sprintf("output throughput reaches %.0f%% of its best (%s tokens/s) at %s=%v%s",
				100*saturatedAt, num(bestV), x, s.Params[x], groupSuffix(g))
			t0, t1 := first.Metrics["ttft_ms"].Summary, s.Metrics["ttft_ms"].Summary
			if t0 != nil && t1 != nil && s != first {
				text += fmt.Sprintf("; TTFT p95 there is %s ms against %s ms at %s=%v", num(t1.P95), num(t0.P95), x, first.Params[x])
			}
			text += "; more load past this point mostly adds queueing"
			out = append(out, advice{"info", bench, text})
			break
		}
	}
	return out
}

// swept returns the parameter a kind's scenarios sweep and the groups of the sweep with two
// scenarios or more, what the advice on a sweep reads; "" and none when nothing is swept.
func swept(scs []*result.Scenario, kind string) (x string, groups []group) {
	p := newPlot(scs, kind, func() string { return "" })
	if p.x == "" {
		return "", nil
	}
	for _, g := range p.groups {
		if len(g.Scs) >= 2 {
			groups = append(groups, g)
		}
	}
	return p.x, groups
}

// flagged finds findings other parts marked in a scenario's extra sections: the monitor's memory
// growth check, and any object with "flagged": true and a "reason" in a section this version
// does not know.
func flagged(s *result.Scenario) []string {
	var out []string
	keys := slices.Collect(maps.Keys(s.Extra.Other))
	if s.Extra.Resources != nil {
		keys = append(keys, result.SectionResources)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k == result.SectionResources {
			if g := s.Extra.Resources.Growth; g != nil && g.Flagged {
				out = append(out, fmt.Sprintf("%s.memory_growth: %s", k, g.Reason))
			}
			continue
		}
		var v any
		if json.Unmarshal(s.Extra.Other[k], &v) == nil {
			walkFlagged(k, v, &out, 0)
		}
	}
	return out
}

func walkFlagged(path string, v any, out *[]string, depth int) {
	if depth > 4 {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		if f, _ := x["flagged"].(bool); f {
			reason, _ := x["reason"].(string)
			*out = append(*out, fmt.Sprintf("%s: %s", path, reason))
			return
		}
		keys := slices.Sorted(maps.Keys(x))
		for _, k := range keys {
			if k != "timelines" { // long number lists, never a finding
				walkFlagged(path+"."+k, x[k], out, depth+1)
			}
		}
	}
}

type benchScs struct {
	name string
	scs  []*result.Scenario
}

// byBenchmark groups a run's scenarios by benchmark, in the order they first appear.
func byBenchmark(r *result.Run) []benchScs {
	var out []benchScs
	idx := map[string]int{}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		j, ok := idx[s.Benchmark]
		if !ok {
			j = len(out)
			idx[s.Benchmark] = j
			out = append(out, benchScs{name: s.Benchmark})
		}
		out[j].scs = append(out[j].scs, s)
	}
	return out
}
