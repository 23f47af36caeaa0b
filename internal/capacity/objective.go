package capacity

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Limit is one per-request latency limit: a request meets it when its figure of Metric is within
// Ms.
type Limit struct {
	Metric string  `json:"metric"` // ttft_ms, itl_ms, tpot_ms, e2e_ms, ttft_sched_ms, e2e_sched_ms
	Ms     float64 `json:"limit_ms"`
}

// Objective is what a step is judged on: the fraction of requests meeting every one of its limits
// (its attainment) must be at least Target.
type Objective struct {
	Name   string  `json:"name"`   // "ttft_ms.p99" or "goodput"
	Target float64 `json:"target"` // in (0, 1)
	Limits []Limit `json:"limits"`
}

// Measures are one request's figures, in milliseconds; NaN where the request has none (ITLMax and
// TPOT of a one-token answer, the _sched forms of a request sent at once).
type Measures struct {
	Failed              bool
	TTFT, ITLMax, TPOT  float64
	E2E                 float64
	TTFTSched, E2ESched float64
}

func (m Measures) of(metric string) float64 {
	switch metric {
	case "ttft_ms":
		return m.TTFT
	case "itl_ms":
		return m.ITLMax
	case "tpot_ms":
		return m.TPOT
	case "e2e_ms":
		return m.E2E
	case "ttft_sched_ms":
		return m.TTFTSched
	case "e2e_sched_ms":
		return m.E2ESched
	}
	return math.NaN()
}

// Met reports whether a request with figures m meets every limit of o. A failed request meets
// none; a figure the request does not have (NaN: no gap in a one-token answer) does not count
// against it, as goodput takes it, except its time to first token: a request that streamed no
// token meets no objective.
func (o Objective) Met(m Measures) bool {
	if m.Failed || math.IsNaN(m.TTFT) {
		return false
	}
	for _, l := range o.Limits {
		if v := m.of(l.Metric); v > l.Ms {
			return false
		}
	}
	return true
}

// metrics are the figures a limit may name.
var metrics = []string{"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "ttft_sched_ms", "e2e_sched_ms"}

// Objectives turns SLOs written as {"ttft_ms.p99": 500} into objectives. Without attainment each
// SLO is an objective of its own: "ttft_ms.p99 = 500" asks that 99% of requests have a TTFT within
// 500 ms (p50 or median: half of them). With attainment in (0, 1) they make one objective, as
// goodput counts requests: that fraction of requests meet every limit at once. A statistic that
// is not a percentile (mean, max) has no fraction of requests to judge, and is an error.
func Objectives(slos map[string]float64, attainment float64) ([]Objective, error) {
	if len(slos) == 0 {
		return nil, fmt.Errorf("capacity needs at least one SLO, e.g. ttft_ms.p99=500 (--slo)")
	}
	if attainment < 0 || attainment >= 1 || math.IsNaN(attainment) {
		return nil, fmt.Errorf("attainment %v: want a fraction of requests above 0 and below 1, e.g. 0.9 (or 0: judge each SLO's percentile)", attainment)
	}
	keys := make([]string, 0, len(slos))
	for k := range slos {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Objective
	var all []Limit
	for _, key := range keys {
		limit := slos[key]
		metric, stat, ok := strings.Cut(key, ".")
		if !ok {
			stat = "p99"
		}
		if !contains(metrics, metric) {
			return nil, fmt.Errorf("slo %q: capacity judges %s, not %q", key, strings.Join(metrics, ", "), metric)
		}
		if !(limit > 0) || math.IsInf(limit, 0) {
			return nil, fmt.Errorf("slo %q: limit %v must be above 0 and finite", key, limit)
		}
		target, err := percentile(stat)
		if err != nil && attainment == 0 {
			return nil, fmt.Errorf("slo %q: %v (capacity judges the fraction of requests within a limit; or give an attainment fraction)", key, err)
		}
		l := Limit{Metric: metric, Ms: limit}
		all = append(all, l)
		if attainment == 0 {
			out = append(out, Objective{Name: key, Target: target, Limits: []Limit{l}})
		}
	}
	if attainment > 0 {
		out = []Objective{{Name: "goodput", Target: attainment, Limits: all}}
	}
	return out, nil
}

func percentile(stat string) (float64, error) {
	switch stat {
	case "median":
		return 0.5, nil
	case "mean", "max":
		return 0, fmt.Errorf("statistic %q is not a percentile", stat)
	}
	p, err := strconv.ParseFloat(strings.TrimPrefix(stat, "p"), 64)
	if err != nil || !strings.HasPrefix(stat, "p") || !(p > 0 && p < 100) {
		return 0, fmt.Errorf("statistic %q: want a percentile such as p90, p99 or p99.9", stat)
	}
	return p / 100, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
