// This file holds what both paired runs (Ref, Variants) do around one scenario's A/B: the
// scenario's result before it is measured, the calls kept block by block, and the section of
// run.json that holds the other side.

package ab

import (
	"context"
	"encoding/json"
	"time"

	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// pairScenario is the result of scenario s of a paired run before it is measured: its
// definition's fields, status ok, or skipped when skip says why.
func pairScenario(s *suite.Scenario, skip string) result.Scenario {
	b := s.Benchmark
	sc := result.Scenario{
		Benchmark: b.Name, Scenario: s.Name, Category: b.Category, Model: s.Model(), Tags: b.Tags,
		Source: b.Source(), Subject: b.Kind, Params: map[string]any(s.Params), Status: result.StatusOK,
		StartedAt: time.Now(), Gate: b.Gate, Strict: b.Strict, Budgets: b.Budgets,
	}
	if skip != "" {
		sc.Status, sc.SkipReason = result.StatusSkipped, skip
	}
	return sc
}

// blocksKept is what a paired A/B measured, block by block: each side's values of the compared
// metric and its failed calls, and each block's other figures, in order (cpu_ms).
type blocksKept struct {
	calls  [2][]float64
	failed [2]int
	others []map[string][]float64
	last   map[string][]float64 // the other figures of the block being measured
}

// keep is the samplers' hook for a block's other figures.
func (k *blocksKept) keep(m map[string][]float64) { k.last = m }

// run runs the A/B of a and b (Run) with opts, keeping each measured block's calls; progress,
// when set, hears of each block once they are kept.
func (k *blocksKept) run(ctx context.Context, a, b string, sampler Sampler, opts Options, progress func(Block)) (*Result, error) {
	var xs []float64
	failed := 0
	opts.Progress = func(bl Block) {
		k.others = append(k.others, k.last)
		k.last = nil
		v := bl.Side()
		k.calls[v] = append(k.calls[v], xs...)
		k.failed[v] += failed
		if progress != nil {
			progress(bl)
		}
	}
	return Run(ctx, a, b, func(ctx context.Context, v, n int) ([]float64, int, error) {
		k.last = nil
		var err error
		xs, failed, err = sampler(ctx, v, n)
		return xs, failed, err
	}, opts)
}

// finish gives sc what was measured: its duration, warm-up and measured calls, B's calls as
// its metric, and res's warnings. It returns the section of the other side: A's calls and the
// A/B (nil without one).
func (k *blocksKept) finish(sc *result.Scenario, res *Result, metric string, warm int) *RefSection {
	sc.DurationS = time.Since(sc.StartedAt).Seconds()
	sc.Iterations = result.Iterations{Warmup: max(0, warm), Measured: len(k.calls[1]), Failed: k.failed[1]}
	if len(k.calls[1]) > 0 {
		sc.Metrics = map[string]result.Metric{metric: result.SampleMetric(metric, k.calls[1])}
	}
	if res == nil {
		return nil
	}
	sc.Warnings = append(sc.Warnings, res.Warnings...)
	return &RefSection{Baseline: result.SampleMetric(metric, k.calls[0]), Result: res}
}

// putSection writes sec into sc's extra sections under key.
func putSection(sc *result.Scenario, key string, sec any) {
	raw, err := finite.Marshal(sec)
	if err != nil {
		return
	}
	if sc.Extra.Other == nil {
		sc.Extra.Other = map[string]json.RawMessage{}
	}
	sc.Extra.Other[key] = raw
}
