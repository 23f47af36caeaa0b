// Package ab compares two variants on one machine by running them interleaved: alternating
// blocks of calls, A then B in one pair of blocks, B then A in the next (ABBA), so that a slow
// drift of the machine (thermal throttling, clocks, neighbours, a mode that switches) falls on
// both sides alike. Each block is summarised by its median; the verdict comes from a paired test
// on the log ratios of the pairs' medians, with a confidence interval of the ratio B/A. A
// before/after comparison of two runs made one after the other cannot cancel such a drift: it
// shows up as a difference (see docs/history.md, "Interleaved A/B", for measured rates).
//
// The variants are anything a Sampler can call: two scenarios of a matrix, two commands (two
// builds), two servers. Subjects gives the Sampler of two opened subjects; Compare is
// `inferbench ab`: it resolves and opens the two variants, runs them and writes the result.
package ab

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	mstats "github.com/aclements/go-moremath/stats"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// Sampler runs n measured calls of variant 0 (A) or 1 (B) and returns one value of the compared
// metric per successful call, and how many calls failed.
type Sampler func(ctx context.Context, variant, n int) (values []float64, failed int, err error)

// Options configure Run. The zero value takes the defaults.
type Options struct {
	// Pairs of blocks (default 20): the paired test has Pairs-1 degrees of freedom.
	Pairs int
	// BlockCalls are the measured calls per block (default 20).
	BlockCalls int
	// Warmup calls of each variant before the first block, not measured (default 5).
	Warmup int
	// Metric compared (default latency_ms) and its direction (default: the catalogue's).
	Metric string
	Better result.Direction
	// Alpha is the test's level; the interval of the ratio has confidence 1 - Alpha
	// (default 0.01: a gate that fails one job in a hundred when nothing changed).
	Alpha float64
	// Threshold in percent: B counts as a regression when it is significantly worse than A by
	// more than this (default: compare.DefaultThresholds of the metric's kind).
	Threshold *float64
	// Progress, when set, hears about every block as it completes.
	Progress func(b Block)
}

func (o Options) norm() Options {
	if o.Pairs <= 0 {
		o.Pairs = 20
	}
	if o.BlockCalls <= 0 {
		o.BlockCalls = 20
	}
	if o.Warmup < 0 {
		o.Warmup = 0
	} else if o.Warmup == 0 {
		o.Warmup = 5
	}
	if o.Metric == "" {
		o.Metric = "latency_ms"
	}
	if o.Better == "" {
		info, _ := result.Lookup(o.Metric)
		o.Better = info.Better
	}
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = 0.01
	}
	if o.Threshold == nil {
		t := compare.Thresholds{}.For("", o.Metric)
		o.Threshold = &t
	}
	return o
}

// Block is one block of calls of one variant.
type Block struct {
	Pair    int       `json:"pair"`
	Variant string    `json:"variant"` // "A" or "B"
	Start   time.Time `json:"start"`
	N       int       `json:"n"`
	Failed  int       `json:"failed"`
	Median  float64   `json:"median"`
}

// Result is the outcome of an interleaved A/B.
type Result struct {
	A      string  `json:"a"`
	B      string  `json:"b"`
	Metric string  `json:"metric"`
	Unit   string  `json:"unit"`
	Better string  `json:"better"`
	Blocks []Block `json:"blocks"`
	// Pairs used by the test (pairs where both blocks have values).
	Pairs int `json:"pairs"`
	// MedianA and MedianB are the medians of each side's block medians.
	MedianA float64 `json:"median_a"`
	MedianB float64 `json:"median_b"`
	// Ratio is B/A: the geometric mean of the pairs' median ratios; CI its interval.
	Ratio float64        `json:"ratio"`
	CI    stats.Interval `json:"ci"`
	// P is the two-sided p-value of the paired t-test on the log ratios.
	P         float64  `json:"p"`
	Method    string   `json:"method"`
	Alpha     float64  `json:"alpha"`
	Threshold float64  `json:"threshold_pct"`
	Verdict   string   `json:"verdict"` // compare's: regression, worse, unchanged, better, improvement, changed
	Warnings  []string `json:"warnings,omitempty"`
}

// Failed reports whether the A/B fails a CI gate: B regressed against A.
func (r *Result) Failed() bool { return r.Verdict == compare.Regression }

// ErrTooFewPairs is returned (wrapped) when fewer than three pairs of blocks have values.
var ErrTooFewPairs = errors.New("too few pairs of blocks with values for a paired test (want at least 3)")

// Run warms both variants up, runs opts.Pairs pairs of blocks in ABBA order and analyses them.
// When ctx is cancelled it stops after the current block and analyses the pairs it has.
func Run(ctx context.Context, a, b string, sample Sampler, opts Options) (*Result, error) {
	o := opts.norm()
	for v := range 2 {
		if o.Warmup > 0 {
			if _, _, err := sample(ctx, v, o.Warmup); err != nil {
				return nil, fmt.Errorf("warm-up of %s: %w", []string{a, b}[v], err)
			}
		}
	}
	var blocks []Block
	var interrupted bool
	for p := 0; p < o.Pairs && !interrupted; p++ {
		order := []int{0, 1}
		if p%2 == 1 {
			order = []int{1, 0}
		}
		for _, v := range order {
			if ctx.Err() != nil {
				interrupted = true
				break
			}
			blk := Block{Pair: p, Variant: "AB"[v : v+1], Start: time.Now()}
			xs, failed, err := sample(ctx, v, o.BlockCalls)
			if err != nil {
				return nil, fmt.Errorf("block %d of %s: %w", p, []string{a, b}[v], err)
			}
			blk.N, blk.Failed = len(xs), failed
			if len(xs) > 0 {
				blk.Median = median(xs)
			} else {
				blk.Median = math.NaN()
			}
			blocks = append(blocks, blk)
			if o.Progress != nil {
				o.Progress(blk)
			}
		}
	}
	r, err := Analyze(blocks, o)
	if r != nil {
		r.A, r.B = a, b
		if interrupted {
			r.Warnings = append(r.Warnings, fmt.Sprintf("interrupted after %d of %d pairs", r.Pairs, o.Pairs))
		}
	}
	return r, err
}

// Analyze tests blocks (as Run makes them) with a paired t-test on the log ratios of each pair's
// block medians, and gives the ratio B/A with its 1 - Alpha interval and the verdict.
func Analyze(blocks []Block, opts Options) (*Result, error) {
	o := opts.norm()
	info, _ := result.Lookup(o.Metric)
	r := &Result{Metric: o.Metric, Unit: info.Unit, Better: string(o.Better), Blocks: blocks, Alpha: o.Alpha, Threshold: *o.Threshold,
		Method: "paired t-test on log ratios of block medians (ABBA blocks)"}
	type pair struct{ a, b float64 }
	pairs := map[int]*pair{}
	failed := 0
	for _, bl := range blocks {
		failed += bl.Failed
		if pairs[bl.Pair] == nil {
			pairs[bl.Pair] = &pair{math.NaN(), math.NaN()}
		}
		if bl.Variant == "A" {
			pairs[bl.Pair].a = bl.Median
		} else {
			pairs[bl.Pair].b = bl.Median
		}
	}
	if failed > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d calls failed and are not in the block medians", failed))
	}
	var logs, as, bs []float64
	for _, k := range slices.Sorted(maps.Keys(pairs)) {
		p := pairs[k]
		if math.IsNaN(p.a) || math.IsNaN(p.b) || p.a <= 0 || p.b <= 0 {
			continue
		}
		logs = append(logs, math.Log(p.b/p.a))
		as, bs = append(as, p.a), append(bs, p.b)
	}
	r.Pairs = len(logs)
	if r.Pairs < 3 {
		return r, fmt.Errorf("%s: %w", o.Metric, ErrTooFewPairs)
	}
	r.MedianA, r.MedianB = median(as), median(bs)
	m := mean(logs)
	sd := math.Sqrt(variance(logs, m))
	n := float64(len(logs))
	tq := mstats.InvCDF(mstats.TDist{V: n - 1})(1 - o.Alpha/2)
	half := tq * sd / math.Sqrt(n)
	r.Ratio = math.Exp(m)
	r.CI = stats.Interval{Lo: math.Exp(m - half), Hi: math.Exp(m + half), Confidence: 1 - o.Alpha}
	switch {
	case sd == 0 && m == 0:
		r.P = 1
	case sd == 0:
		r.P = 0
	default:
		t := m / (sd / math.Sqrt(n))
		r.P = 2 * (1 - mstats.TDist{V: n - 1}.CDF(math.Abs(t)))
	}
	if r.Pairs < 6 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d pairs: the interval is wide; 10 or more pairs give a usable verdict", r.Pairs))
	}
	r.Verdict = verdict(r)
	return r, nil
}

func verdict(r *Result) string {
	sig := r.P <= r.Alpha
	worse := (r.Ratio - 1) * 100 // percent worse for lower-is-better
	switch r.Better {
	case string(result.Higher):
		worse = -worse
	case string(result.Lower):
	default:
		if sig {
			return compare.Changed
		}
		return compare.Unchanged
	}
	switch {
	case !sig:
		return compare.Unchanged
	case worse > r.Threshold:
		return compare.Regression
	case worse > 0:
		return compare.Worse
	case -worse > r.Threshold:
		return compare.Improvement
	}
	return compare.Better
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return stats.Quantile(s, 0.5)
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func variance(xs []float64, m float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s / float64(len(xs)-1)
}
