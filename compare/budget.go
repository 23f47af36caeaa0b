package compare

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/inferbench/inferbench/result"
)

// CheckBudgets checks a scenario against its own budgets (from its definition) and those a budget
// file gives it. A budget on a metric the scenario did not measure is reported, not exceeded.
func CheckBudgets(s *result.Scenario, file *BudgetFile) []BudgetCheck {
	var out []BudgetCheck
	add := func(budgets map[string]string, source string) {
		keys := slices.Sorted(maps.Keys(budgets))
		for _, k := range keys {
			if IsRatioBudget(k) {
				continue // between scenarios: CheckRunBudgets
			}
			c := BudgetCheck{Benchmark: s.Benchmark, Scenario: s.Scenario, Metric: k, Source: source}
			op, limit, err := ParseBudget(budgets[k])
			if err != nil {
				c.Op = budgets[k]
				c.OK = false
				out = append(out, c)
				continue
			}
			c.Op, c.Limit = op, limit
			c.Actual, c.Measured = MetricStat(s, k)
			c.OK = !c.Measured || Holds(c.Actual, op, limit)
			out = append(out, c)
		}
	}
	add(s.Budgets, "definition")
	add(file.For(s), file.source())
	return out
}

// CheckRunBudgets checks every successful scenario of r with CheckBudgets, then the ratio budgets
// between its scenarios (Ratio), and counts the budgets exceeded.
func CheckRunBudgets(r *result.Run, file *BudgetFile) (checks []BudgetCheck, exceeded int) {
	for i := range r.Scenarios {
		if r.Scenarios[i].Status == result.StatusOK {
			checks = append(checks, CheckBudgets(&r.Scenarios[i], file)...)
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

// ParseBudget parses a budget expression: "<= 25", "< 25", ">= 100", "> 100", or a bare number
// (meaning "<="). The limit is a finite number: "<= Inf" would always hold, "<= NaN" never.
func ParseBudget(e string) (op string, limit float64, err error) {
	e = strings.TrimSpace(e)
	op = "<="
	for _, o := range []string{"<=", ">=", "<", ">"} {
		if strings.HasPrefix(e, o) {
			op, e = o, strings.TrimSpace(e[len(o):])
			break
		}
	}
	limit, err = strconv.ParseFloat(e, 64)
	if err != nil {
		return "", 0, fmt.Errorf("budget %q: want an operator (<=, <, >=, >) and a number, e.g. \"<= 25\"", e)
	}
	if math.IsNaN(limit) || math.IsInf(limit, 0) {
		return "", 0, fmt.Errorf("budget %q: want a finite number (a budget of NaN never holds, of Inf always)", e)
	}
	return op, limit, nil
}

// Holds reports whether v op limit is true, for op one of <, >, >=, <= (anything else is <=).
func Holds(v float64, op string, limit float64) bool {
	switch op {
	case "<":
		return v < limit
	case ">":
		return v > limit
	case ">=":
		return v >= limit
	}
	return v <= limit
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
