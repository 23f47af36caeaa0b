package compare

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/inferbench/inferbench/internal/budget"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// This file holds the budgets: limits a scenario's figures must hold in the new run alone
// (CheckBudgets, MetricStat), and ratio budgets between two scenarios of a run (budget.Ratio).

// BudgetCheck is one budget of one scenario of the new run.
type BudgetCheck struct {
	Benchmark string  `json:"benchmark"`
	Scenario  string  `json:"scenario"`
	Metric    string  `json:"metric"` // "latency_ms.p95"
	Op        string  `json:"op"`
	Limit     float64 `json:"limit"`
	Actual    float64 `json:"actual"`
	Measured  bool    `json:"measured"` // false: the metric was not in the run
	OK        bool    `json:"ok"`
	Source    string  `json:"source"` // "definition" or the budget file
	// Against is the denominator scenario of a ratio budget (ratio(a/b).metric), whose Scenario
	// is the numerator; CI is the ratio's bootstrap 95% interval when both kept samples.
	Against string          `json:"against,omitempty"`
	CI      *stats.Interval `json:"ci,omitempty"`
}

// checkBudgets checks a scenario against its own budgets (from its definition) and those a budget
// file gives it. A budget on a metric the scenario did not measure is reported, not exceeded.
func checkBudgets(s *result.Scenario, file *BudgetFile) []BudgetCheck {
	var out []BudgetCheck
	add := func(budgets map[string]string, source string) {
		keys := slices.Sorted(maps.Keys(budgets))
		for _, k := range keys {
			if budget.IsRatioBudget(k) {
				continue // between scenarios: CheckRunBudgets
			}
			c := BudgetCheck{Benchmark: s.Benchmark, Scenario: s.Scenario, Metric: k, Source: source}
			op, limit, err := budget.ParseBudget(budgets[k])
			if err != nil {
				c.Op = budgets[k]
				c.OK = false
				out = append(out, c)
				continue
			}
			c.Op, c.Limit = op, limit
			c.Actual, c.Measured = MetricStat(s, k)
			c.OK = !c.Measured || budget.Holds(c.Actual, op, limit)
			out = append(out, c)
		}
	}
	add(s.Budgets, "definition")
	add(file.For(s), file.source())
	return out
}

// CheckRunBudgets checks every successful scenario of r with CheckBudgets, then the ratio budgets
// between its scenarios (`ratio(A/B).METRIC.STAT: "<= 1.05"`), and counts the budgets exceeded.
func CheckRunBudgets(r *result.Run, file *BudgetFile) (checks []BudgetCheck, exceeded int) {
	for i := range r.Scenarios {
		if r.Scenarios[i].Status == result.StatusOK {
			checks = append(checks, checkBudgets(&r.Scenarios[i], file)...)
		}
	}
	checks = append(checks, ratioChecks(r, file)...)
	for _, c := range checks {
		if !c.OK {
			exceeded++
		}
	}
	return checks, exceeded
}

// metricAliases are budget names other tools use for inferbench's metrics.
var metricAliases = map[string]string{"cpu_percent": "cpu_pct", "memory_used_mb": "memory_mb", "peak_memory_mb": "memory_mb"}

// MetricStat returns a statistic of a scenario's metric: "latency_ms.p95", "memory_mb.max",
// "throughput_ips" (its center). A value metric answers every statistic with its value.
func MetricStat(s *result.Scenario, key string) (float64, bool) {
	name, stat, _ := strings.Cut(key, ".")
	if a, ok := metricAliases[name]; ok {
		if _, has := s.Metrics[name]; !has {
			name = a
		}
	}
	m, ok := s.Metrics[name]
	if !ok {
		return 0, false
	}
	if m.Value != nil {
		return *m.Value, true
	}
	sum := m.Summary
	if sum == nil {
		return 0, false
	}
	switch stat {
	case "", "center", "median", "p50":
		return sum.Median, true
	case "mean":
		return sum.Mean, true
	case "min":
		return sum.Min, true
	case "max":
		return sum.Max, true
	case "std":
		return sum.Std, true
	case "cv":
		return sum.CV, true
	case "p25":
		return sum.P25, true
	case "p75":
		return sum.P75, true
	case "p90":
		return sum.P90, true
	case "p95":
		return sum.P95, true
	case "p99":
		return sum.P99, true
	case "p99_9", "p999":
		if sum.P999 != nil {
			return *sum.P999, true
		}
	}
	return math.NaN(), false
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
				if !budget.IsRatioBudget(k) {
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
		rt, err := budget.ParseRatio(x.key)
		op, limit, err2 := budget.ParseBudget(x.expr)
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
				c.OK = budget.Holds(c.Actual, op, limit)
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
	if need := minTailSamples(100 * q); len(ns) < need || len(ds) < need {
		return nil
	}
	var b stats.Bootstrap
	_, ci, _, ok := b.RatioTest(ds, ns, q)
	if !ok {
		return nil
	}
	return &ci
}
