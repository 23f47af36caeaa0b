// Package budget is the syntax of budgets and gates that definitions (suite), the budget file and
// --gate (compare, the command line) and alert rules (alert) share: a budget's limit ("<= 25"),
// a ratio budget between two scenarios ("ratio(callback/baseline).latency_ms.p50"), a gate entry
// ("BENCHMARK:METRIC"), and whether a value holds against a limit.
package budget

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

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

// Ratio is an overhead budget between two scenarios of one run, such as an experiment tracker's
// promise that "tracking adds less than 5%": `ratio(callback/baseline).latency_ms.p50: "<= 1.05"`.
// Num and Den select scenarios of the budget's benchmark: a scenario name ("variant=callback"), a
// parameter ("variant=callback"), or a bare parameter value ("callback"). Each scenario Num selects
// is divided by the scenario Den selects that has the same parameters otherwise, so a matrix with
// more axes (batch sizes) gets one check per point.
type Ratio struct {
	Num, Den string
	// Metric is the statistic compared, "latency_ms.p50" (compare.MetricStat's syntax).
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

// ParseGate checks one --gate entry: "METRIC" ("peak_rss_mb"; its tail rows too),
// "METRIC.pNN" (that tail row only), "BENCHMARK:METRIC", or "all". It returns the entry trimmed.
func ParseGate(s string) (string, error) {
	s = strings.TrimSpace(s)
	bench, metric, scoped := strings.Cut(s, ":")
	if !scoped {
		metric, bench = bench, ""
	}
	switch {
	case s == "":
		return "", fmt.Errorf("gate %q: want METRIC, BENCHMARK:METRIC or all, e.g. --gate peak_rss_mb", s)
	case strings.ContainsAny(s, " \t"):
		return "", fmt.Errorf("gate %q: a metric name has no blanks (give one metric per --gate)", s)
	case scoped && (bench == "" || metric == ""):
		return "", fmt.Errorf("gate %q: want BENCHMARK:METRIC, e.g. resnet:peak_rss_mb", s)
	}
	return s, nil
}
