// Package advice turns measurements into suggestions: a small rule set, each rule driven by what
// the run (and its history) measured, each tip saying which figures triggered it.
//
//   - quantisation: a model whose latency is high at full precision; when the same benchmark also
//     ran at a lower precision, the measured speed-up is quoted instead of a guess
//   - batching: the GPU was idle much of the time at a small batch size
//   - memory growth: memory rose steadily within the run (the monitor's fit), or peak memory
//     shifted up across stored runs (a change point)
package advice

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// Rules are the thresholds of the rule set (a plain documented struct; DefaultRules is used
// when zero).
type Rules struct {
	// HighLatencyMS: a full-precision scenario slower than this (median) gets the quantisation tip.
	HighLatencyMS float64
	// IdleGPUPct: mean GPU utilisation below this, at a batch size up to SmallBatch, gets the
	// batching tip.
	IdleGPUPct float64
	SmallBatch float64
	// HistoryGrowth: a change point in peak memory across stored runs larger than this fraction.
	HistoryGrowth float64
}

// DefaultRules are the defaults.
var DefaultRules = Rules{HighLatencyMS: 50, IdleGPUPct: 50, SmallBatch: 8, HistoryGrowth: 0.10}

// History returns a scenario's metric values over stored runs, oldest first (nil when unknown):
// the values of the runs of the same scenario identity, its benchmark and every parameter
// (compare.Key, as history's series), so that runs with other --set values are not mixed in.
type History func(s *result.Scenario, metric string) []float64

// BenchmarkHistory returns one metric's values over stored runs for every scenario of a
// benchmark, by scenario identity (compare.Key), each oldest first.
type BenchmarkHistory func(benchmark, metric string) map[string][]float64

// PerBenchmark returns a History that asks h once per benchmark and metric, and answers each
// scenario with its last limit values (all of them when limit <= 0): what a History asking the
// store once per scenario and metric with that limit answers, in a query per benchmark.
//
// Note: For asks for three metrics of every scenario; a merged run of 64,000 scenarios made
// 192,000 store queries one by one, most of the time its merge took.
func PerBenchmark(h BenchmarkHistory, limit int) History {
	type key struct{ benchmark, metric string }
	cache := map[key]map[string][]float64{}
	return func(s *result.Scenario, metric string) []float64 {
		k := key{s.Benchmark, metric}
		by, ok := cache[k]
		if !ok {
			by = h(s.Benchmark, metric)
			cache[k] = by
		}
		xs := by[compare.Key(s)]
		if limit > 0 && len(xs) > limit {
			xs = xs[len(xs)-limit:]
		}
		return xs
	}
}

var fullPrecision = map[string]bool{"float32": true, "fp32": true, "float": true, "torch.float32": true}
var lowPrecision = []string{"int8", "fp8", "float16", "fp16", "half", "bfloat16", "bf16", "int4"}

// For returns the tips for a run. hist may be nil.
func For(r *result.Run, rules Rules, hist History) []result.Tip {
	if rules == (Rules{}) {
		rules = DefaultRules
	}
	// The scenarios of each benchmark, in run order: the quantisation rule looks for siblings
	// among them (looking through the whole run for each was quadratic in its size).
	byBenchmark := map[string][]*result.Scenario{}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		byBenchmark[s.Benchmark] = append(byBenchmark[s.Benchmark], s)
	}
	var tips []result.Tip
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if s.Status != result.StatusOK {
			continue
		}
		tips = append(tips, quantisation(byBenchmark[s.Benchmark], s, rules)...)
		tips = append(tips, batching(s, rules)...)
		tips = append(tips, growth(s, rules, hist)...)
	}
	return tips
}

func param(s *result.Scenario, k string) string {
	if v, ok := s.Params[k]; ok && v != nil {
		return strings.ToLower(fmt.Sprint(v))
	}
	return ""
}

func median(s *result.Scenario, m string) (float64, bool) {
	return s.Metrics[m].Center()
}

// quantisation looks for a faster lower-precision sibling among siblings (the scenarios of s's
// benchmark).
func quantisation(siblings []*result.Scenario, s *result.Scenario, rules Rules) []result.Tip {
	dtype := param(s, "dtype")
	if !fullPrecision[dtype] {
		return nil
	}
	lat, ok := median(s, "latency_ms")
	if !ok || lat < rules.HighLatencyMS {
		return nil
	}
	// A sibling: same benchmark and parameters but a lower-precision dtype.
	for _, o := range siblings {
		if o.Benchmark != s.Benchmark || o.Status != result.StatusOK || !slices.Contains(lowPrecision, param(o, "dtype")) || !sameExcept(s, o, "dtype") {
			continue
		}
		if ol, ok := median(o, "latency_ms"); ok && ol > 0 && ol < lat {
			return []result.Tip{{Rule: "quantisation", Scenario: s.ID(), Text: fmt.Sprintf("median latency %.1f ms at %s; %s measured %.1f ms here (%.2f× faster): prefer it where accuracy allows", lat, dtype, param(o, "dtype"), ol, lat/ol)}}
		}
	}
	return []result.Tip{{Rule: "quantisation", Scenario: s.ID(), Text: fmt.Sprintf("median latency %.1f ms at %s: try float16/bfloat16 or int8 quantisation (add a dtype axis to the matrix to measure it)", lat, dtype)}}
}

func sameExcept(a, b *result.Scenario, skip string) bool {
	if len(a.Params) != len(b.Params) {
		return false
	}
	for k, v := range a.Params {
		if k == skip {
			continue
		}
		if fmt.Sprint(b.Params[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

func batching(s *result.Scenario, rules Rules) []result.Tip {
	util, ok := median(s, "gpu_util_pct")
	if !ok || util >= rules.IdleGPUPct {
		return nil
	}
	bs := 1.0
	if v := param(s, "batch_size"); v != "" {
		if _, err := fmt.Sscan(v, &bs); err != nil {
			return nil
		}
	}
	if bs > rules.SmallBatch {
		return nil
	}
	return []result.Tip{{Rule: "batching", Scenario: s.ID(), Text: fmt.Sprintf("the GPU was busy %.0f%% of the time at batch size %g: batch more requests (or raise concurrency) to use it", util, bs)}}
}

func growth(s *result.Scenario, rules Rules, hist History) []result.Tip {
	var tips []result.Tip
	for _, w := range s.Warnings {
		if strings.HasPrefix(w, "memory growth:") {
			tips = append(tips, result.Tip{Rule: "memory-growth", Scenario: s.ID(), Text: strings.TrimSpace(strings.TrimPrefix(w, "memory growth:")) + ": memory rose steadily while measuring; look for caches without a bound, tensors kept across iterations, or a leak"})
		}
	}
	if hist == nil {
		return tips
	}
	for _, m := range []string{"memory_mb", "gpu_memory_mb", "peak_rss_mb"} {
		xs := hist(s, m)
		cps := stats.ChangePoints(xs, stats.ChangeOptions{MinMagnitude: rules.HistoryGrowth})
		if len(cps) == 0 {
			continue
		}
		last := cps[len(cps)-1]
		if last.Magnitude > 0 {
			tips = append(tips, result.Tip{Rule: "memory-growth", Scenario: s.ID(), Text: fmt.Sprintf("%s shifted up %+.0f%% (%.0f → %.0f) %d runs ago, and stayed there", m, 100*last.Magnitude, last.Before, last.After, len(xs)-last.Index)})
		}
	}
	return tips
}
