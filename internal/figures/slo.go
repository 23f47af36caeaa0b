package figures

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/inferbench/inferbench/stats"
)

// SLO is one service-level objective: a per-request metric, the statistic of its distribution
// that must stay within Limit, and Limit.
type SLO struct {
	Key    string  // as written: "ttft_ms.p99"
	Metric string  // ttft_ms, tpot_ms, e2e_ms, itl_ms, ttft_sched_ms, e2e_sched_ms
	Stat   string  // p50, p90, p95, p99, p99.9, mean, median, max
	Limit  float64 // in the metric's unit
}

// sloMetrics are the metrics an SLO can name.
var sloMetrics = []string{"ttft_ms", "tpot_ms", "e2e_ms", "itl_ms", "ttft_sched_ms", "e2e_sched_ms"}

// ParseSLOs checks and orders SLOs given as {"ttft_ms.p99": 500}. A key without a statistic
// means p99.
func ParseSLOs(m map[string]float64) ([]SLO, error) {
	var out []SLO
	for key, limit := range m {
		metric, stat, ok := strings.Cut(key, ".")
		if !ok {
			stat = "p99"
		}
		// "p99.9" splits at its own dot.
		if rest, ok2 := strings.CutPrefix(stat, "p99."); ok2 {
			stat = "p99." + rest
		}
		if !slices.Contains(sloMetrics, metric) {
			return nil, fmt.Errorf("slo %q: unknown metric %q (want one of %s)", key, metric, strings.Join(sloMetrics, ", "))
		}
		if _, ok := statOf(stats.Summary{}, stat); !ok {
			return nil, fmt.Errorf("slo %q: unknown statistic %q (want p50, p90, p95, p99, p99.9, mean, median or max)", key, stat)
		}
		if !(limit > 0) || math.IsInf(limit, 0) {
			return nil, fmt.Errorf("slo %q: limit %v must be above 0 and finite", key, limit)
		}
		out = append(out, SLO{Key: key, Metric: metric, Stat: stat, Limit: limit})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// statOf reads a statistic from a summary.
func statOf(s stats.Summary, stat string) (float64, bool) {
	switch stat {
	case "p50", "median":
		return s.Median, true
	case "p25":
		return s.P25, true
	case "p75":
		return s.P75, true
	case "p90":
		return s.P90, true
	case "p95":
		return s.P95, true
	case "p99":
		return s.P99, true
	case "p99.9":
		if s.P999 != nil {
			return *s.P999, true
		}
		return s.Max, true
	case "mean":
		return s.Mean, true
	case "max":
		return s.Max, true
	}
	return 0, false
}

// judge says whether slos hold over a window's distributions (sum) with failed failed requests,
// and why not: one line per objective missed, each with the value judged.
func judge(slos []SLO, sum func(metric string) (stats.Summary, bool), failed int) (hold bool, failures []string) {
	hold = failed == 0
	for _, slo := range slos {
		x, ok := sum(slo.Metric)
		v, _ := statOf(x, slo.Stat)
		if !ok || v > slo.Limit {
			hold = false
			failures = append(failures, fmt.Sprintf("%s = %s > %s", slo.Key, fmtF(v), fmtF(slo.Limit)))
		}
	}
	if failed > 0 {
		failures = append(failures, fmt.Sprintf("%d failed requests", failed))
	}
	return hold, failures
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
