package compare

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// Ratio is an overhead budget between two scenarios of one run, as seed 003 asks ("tracking adds
// less than 5%"): `ratio(callback/baseline).latency_ms.p50: "<= 1.05"`. Num and Den select
// scenarios of the budget's benchmark: a scenario name ("variant=callback"), a parameter
// ("variant=callback"), or a bare parameter value ("callback"). Each scenario Num selects is
// divided by the scenario Den selects that has the same parameters otherwise, so a matrix with
// more axes (batch sizes) gets one check per point.
type Ratio struct {
	Num, Den string
	// Metric is the statistic compared, "latency_ms.p50" (MetricStat's syntax).
	Metric string
}

// IsRatioBudget reports whether a budget key is a ratio between scenarios.
func IsRatioBudget(key string) bool { return strings.HasPrefix(strings.TrimSpace(key), "ratio(") }

// ParseRatio parses "ratio(NUM/DEN).METRIC[.STAT]".
func ParseRatio(key string) (Ratio, error) {
	k := strings.TrimSpace(key)
	inner, rest, ok := strings.Cut(strings.TrimPrefix(k, "ratio("), ")")
	num, den, ok2 := strings.Cut(inner, "/")
	metric := strings.TrimPrefix(rest, ".")
	if !ok || !ok2 || strings.TrimSpace(num) == "" || strings.TrimSpace(den) == "" || !strings.HasPrefix(rest, ".") || metric == "" {
		return Ratio{}, fmt.Errorf("budget %q: want ratio(SCENARIO/SCENARIO).METRIC.STAT, e.g. ratio(callback/baseline).latency_ms.p50", key)
	}
	return Ratio{Num: strings.TrimSpace(num), Den: strings.TrimSpace(den), Metric: metric}, nil
}

// selects reports whether sel selects scenario s, and the parameter it selects by ("" for a
// scenario name).
func selects(sel string, s *result.Scenario) (axis string, ok bool) {
	if sel == s.Scenario {
		return "", true
	}
	if k, v, kv := strings.Cut(sel, "="); kv {
		if p, has := s.Params[k]; has && fmt.Sprint(p) == v {
			return k, true
		}
		return "", false
	}
	for _, k := range slices.Sorted(maps.Keys(s.Params)) {
		if fmt.Sprint(s.Params[k]) == sel {
			return k, true
		}
	}
	return "", false
}

// sameExcept reports whether two scenarios have the same parameters but for axis.
func sameExcept(a, b *result.Scenario, axis string) bool {
	if len(a.Params) != len(b.Params) {
		return false
	}
	for k, v := range a.Params {
		w, ok := b.Params[k]
		if !ok {
			return false
		}
		if k != axis && fmt.Sprint(v) != fmt.Sprint(w) {
			return false
		}
	}
	return true
}

// ratioChecks evaluates the ratio budgets of a run's successful scenarios (from their definitions
// and from the budget file). A ratio whose numerator selects nothing, or whose numerator has no
// denominator, is reported as not measured.
func ratioChecks(r *result.Run, file *BudgetFile) []BudgetCheck {
	type src struct{ bench, key, expr, source string }
	var keys []src
	seen := map[src]bool{}
	var ok []*result.Scenario
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if s.Status != result.StatusOK {
			continue
		}
		ok = append(ok, s)
		add := func(m map[string]string, source string) {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if !IsRatioBudget(k) {
					continue
				}
				x := src{s.Benchmark, k, m[k], source}
				if !seen[x] {
					seen[x] = true
					keys = append(keys, x)
				}
			}
		}
		add(s.Budgets, "definition")
		add(file.For(s), file.source())
	}
	var out []BudgetCheck
	for _, x := range keys {
		base := BudgetCheck{Benchmark: x.bench, Scenario: "*", Metric: x.key, Source: x.source}
		rt, err := ParseRatio(x.key)
		op, limit, err2 := ParseBudget(x.expr)
		if err != nil || err2 != nil {
			base.Op = x.expr
			out = append(out, base)
			continue
		}
		base.Op, base.Limit = op, limit
		found := false
		for _, n := range ok {
			if n.Benchmark != x.bench {
				continue
			}
			axis, sel := selects(rt.Num, n)
			if !sel {
				continue
			}
			found = true
			c := base
			c.Scenario = n.Scenario
			var d *result.Scenario
			for _, cand := range ok {
				if cand != n && cand.Benchmark == x.bench {
					if _, dsel := selects(rt.Den, cand); dsel && (axis == "" || sameExcept(n, cand, axis)) {
						d = cand
						break
					}
				}
			}
			if d == nil {
				c.OK = true // not measured: reported, not exceeded
				out = append(out, c)
				continue
			}
			c.Against = d.Scenario
			nv, nok := MetricStat(n, rt.Metric)
			dv, dok := MetricStat(d, rt.Metric)
			if nok && dok && dv != 0 && !math.IsNaN(nv) && !math.IsNaN(dv) {
				c.Measured = true
				c.Actual = nv / dv
				c.OK = Holds(c.Actual, op, limit)
				c.CI = ratioCI(n, d, rt.Metric)
			}
			out = append(out, c)
		}
		if !found {
			base.OK = true
			out = append(out, base)
		}
	}
	return out
}

// ratioCI is the bootstrap 95% interval of a percentile ratio between two scenarios' samples,
// when both kept enough of them; nil otherwise.
func ratioCI(n, d *result.Scenario, metric string) *stats.Interval {
	name, stat, _ := strings.Cut(metric, ".")
	q := 0.5
	switch {
	case stat == "" || stat == "median" || stat == "center":
	case strings.HasPrefix(stat, "p"):
		p, err := strconv.ParseFloat(strings.ReplaceAll(stat[1:], "_", "."), 64)
		if err != nil || p <= 0 || p >= 100 {
			return nil
		}
		q = p / 100
	default:
		return nil
	}
	ns, ds := n.Metrics[name].Samples, d.Metrics[name].Samples
	if need := MinTailSamples(100 * q); len(ns) < need || len(ds) < need {
		return nil
	}
	var b stats.Bootstrap
	_, ci, _, ok := b.RatioTest(ds, ns, q)
	if !ok {
		return nil
	}
	return &ci
}
