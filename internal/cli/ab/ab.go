// Package ab compares two variants on one machine by running them interleaved: alternating
// blocks of calls, A then B in one pair of blocks, B then A in the next (ABBA), so that a slow
// drift of the machine (thermal throttling, clocks, neighbours, a mode that switches) falls on
// both sides alike. Each block is summarised by its median; the verdict comes from a paired test
// on the log ratios of the pairs' medians, with a confidence interval of the ratio B/A. A
// before/after comparison of two runs made one after the other cannot cancel such a drift: it
// shows up as a difference (see docs/ab.md for measured rates).
//
// The variants are anything a Sampler can call: two scenarios of a matrix, two commands (two
// builds), two servers. Subjects gives the Sampler of two opened subjects. Every A/B of the
// command line is a stage of run.Run, through a run.Paired: Variants (Compare, `inferbench ab`)
// runs two variants, B the run's scenario; Ref (RefRun, `run --baseline-ref`) runs each selected
// scenario at a git ref beside the working tree's. The run writes, records and renders them as
// any run.
package ab

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// Sampler runs n measured calls of variant 0 (A) or 1 (B) and returns one value of the compared
// metric per successful call, and how many calls failed.
type Sampler func(ctx context.Context, variant, n int) (values []float64, failed int, err error)

// Options configure Run. The zero value takes the defaults: a sequential A/B (pairs are added
// until the answer is decided, or the pairs or the time run out), blocks sized to BlockTime.
type Options struct {
	// Pairs, when set, is a fixed design: this many pairs of blocks, judged once at the end.
	// 0 is sequential: MinPairs pairs, then more, looked at each time they grow by half
	// (sequential.go), until the answer is decided or MaxPairs pairs or MaxTime are spent.
	Pairs int
	// MinPairs and MaxPairs bound a sequential A/B (defaults 16 and 400).
	MinPairs, MaxPairs int
	// MaxTime bounds a sequential A/B's measuring (default 2 minutes): then the answer is what
	// the pairs so far say, unknown unless they decided it.
	MaxTime time.Duration
	// BlockCalls are the measured calls per block; 0 sizes blocks to about BlockTime from the
	// warm-up calls' times (at least one call).
	BlockCalls int
	// BlockTime is a block's length when BlockCalls is 0 (default 200 ms): well under the
	// seconds over which a shared machine changes speed.
	BlockTime time.Duration
	// Warmup calls of each variant before the first block, not measured (default 5), and again
	// after each relaunch; negative is none.
	Warmup int
	// Restart, when set, relaunches a variant's process (closes its subject and opens it anew)
	// every RelaunchPairs pairs (default 8), the two sides in turn, so that a process's starting
	// state (its memory layout, its speed) does not fall on one side.
	Restart       func(ctx context.Context, variant int) error
	RelaunchPairs int
	// Also, when set, judges another metric of the same blocks at each look (the CPU time of a
	// CPU-bound scenario): the A/B stops only when it reports that one decided too.
	Also func(blocks []Block, looks int) bool
	// Looks is the number of looks the test accounts for when Analyze judges blocks that a
	// sequential Run made (Result.Looks); 0 is one.
	Looks int
	// Metric compared (default latency_ms) and its direction (default: the catalogue's).
	Metric string
	Better result.Direction
	// Alpha bounds the rate at which the A/B calls a change that is not there, over all its
	// looks (default 0.01: a gate that fails one job in a hundred, or fewer, when nothing changed).
	Alpha float64
	// Threshold in percent (default DefaultThreshold): B is slower when its interval lies wholly
	// beyond it, the same when wholly within it.
	Threshold *float64
	// Progress, when set, hears about every block as it completes.
	Progress func(b Block)
	// Window, when set, is called right before each measured block of variant v (not the
	// warm-ups), and its stop right after: the resource monitors' window over the block.
	Window func(v int) (stop func())
}

// DefaultThreshold is the paired design's threshold, in percent: what interleaved blocks resolve
// on a shared 2-core runner within the default time (docs/measurements/verdicts.md), far below the 15% of a
// comparison with a stored run.
const DefaultThreshold = 3.0

func (o Options) norm() Options {
	if o.MinPairs <= 0 {
		o.MinPairs = 16
	}
	if o.MaxPairs <= 0 {
		o.MaxPairs = 400
	}
	if o.MaxPairs < o.MinPairs {
		o.MaxPairs = o.MinPairs
	}
	if o.MaxTime <= 0 {
		o.MaxTime = 2 * time.Minute
	}
	if o.BlockCalls < 0 {
		o.BlockCalls = 0
	}
	if o.BlockTime <= 0 {
		o.BlockTime = 200 * time.Millisecond
	}
	if o.RelaunchPairs <= 0 {
		o.RelaunchPairs = 8
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
		t := DefaultThreshold
		o.Threshold = &t
	}
	return o
}

// schedule is the pair counts at which the A/B is judged: the fixed design's one, or the
// sequential looks.
func (o Options) schedule() []int {
	if o.Pairs > 0 {
		return []int{o.Pairs}
	}
	return looks(o.MinPairs, o.MaxPairs)
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

// Side is the block's side as an index: 0 for A, 1 for B.
func (b Block) Side() int {
	if b.Variant == "B" {
		return 1
	}
	return 0
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
	P         float64 `json:"p"`
	Method    string  `json:"method"`
	Alpha     float64 `json:"alpha"`
	Threshold float64 `json:"threshold_pct"`
	Verdict   string  `json:"verdict"` // compare's: regression, worse, unchanged, better, improvement, changed, unknown
	// Answer is the sequential verdict: slower, same, faster, unknown (or changed, for a metric
	// with no better direction). Looks is how many times the pairs were judged (the interval's
	// confidence is 1 - Alpha/Looks of the schedule); Stopped why an unknown answer stopped.
	Answer  string `json:"answer"`
	Looks   int    `json:"looks"`
	Stopped string `json:"stopped,omitempty"`
	// Resolvable is the smallest slowdown, in percent, that these pairs could have told apart
	// from the threshold: the threshold plus the interval's half-width.
	Resolvable float64  `json:"resolvable_pct"`
	Warnings   []string `json:"warnings,omitempty"`
}

// Failed reports whether the A/B fails a CI gate: B is slower than A beyond the threshold.
func (r *Result) Failed() bool { return r.Verdict == compare.Regression }

// Undecided reports whether the A/B ran out of pairs or time before its answer: --strict fails it.
func (r *Result) Undecided() bool { return r.Answer == AnswerUnknown }

// ErrTooFewPairs is returned (wrapped) when fewer than three pairs of blocks have values.
var ErrTooFewPairs = errors.New("too few pairs of blocks with values for a paired test (want at least 3)")

// Run warms both variants up, sizes the blocks, and runs pairs of blocks in ABBA order,
// relaunching the variants' processes every RelaunchPairs pairs when it can, until the schedule's
// look that decides the answer (sequential.go), or its last. When ctx is cancelled it stops after
// the current block and analyses the pairs it has.
func Run(ctx context.Context, a, b string, sample Sampler, opts Options) (*Result, error) {
	o := opts.norm()
	names := [2]string{a, b}
	block, err := warmUp(ctx, sample, o, names)
	if err != nil {
		return nil, err
	}
	sched := o.schedule()
	last := sched[len(sched)-1]
	o.Looks = len(sched) // each look's interval accounts for all the schedule allows
	start := time.Now()
	var blocks []Block
	var interrupted bool
	var r *Result
	look := 0
	for p := 0; p < last && !interrupted; p++ {
		if o.Restart != nil && p > 0 && p%o.RelaunchPairs == 0 {
			if err := relaunch(ctx, sample, o, names, p); err != nil {
				return nil, err
			}
		}
		pair, stopped, blockErr := runPair(ctx, sample, o, names, p, block)
		if blockErr != nil {
			return nil, blockErr
		}
		blocks = append(blocks, pair...)
		if interrupted = stopped; interrupted {
			break
		}
		outOfTime := o.Pairs == 0 && time.Since(start) >= o.MaxTime
		if p+1 < sched[look] && !outOfTime {
			continue
		}
		look++
		r, err = Analyze(blocks, o)
		if err == nil && r.Answer != AnswerUnknown && (o.Also == nil || o.Also(blocks, o.Looks)) {
			break
		}
		if outOfTime {
			if r != nil {
				r.Stopped = fmt.Sprintf("the time budget of %s was spent", o.MaxTime)
			}
			break
		}
	}
	if interrupted || r == nil {
		r, err = Analyze(blocks, o)
	}
	if r != nil {
		r.A, r.B = a, b
		if interrupted {
			r.Warnings = append(r.Warnings, fmt.Sprintf("interrupted after %d pairs", r.Pairs))
			r.Stopped = "interrupted"
		} else if r.Answer == AnswerUnknown && r.Stopped == "" && o.Pairs == 0 {
			r.Stopped = fmt.Sprintf("the budget of %d pairs was spent", last)
		}
	}
	return r, err
}

// warmUp warms both variants up and returns the calls of a block: o.BlockCalls, or as many as
// fill o.BlockTime at the slower variant's wall time per call, timed over the warm-up (over one
// call of each without one).
func warmUp(ctx context.Context, sample Sampler, o Options, names [2]string) (int, error) {
	// perCall is a call's wall time (ms), from the warm-up: a block is a stretch of the
	// machine's time, so it is sized by how long a call takes, not by the figure the call
	// reports (a command that times its own work reports 0.25 ms of a 200 ms process: blocks of
	// 800 such calls lasted 160 s, and a scenario's two minutes held two pairs).
	var perCall [2]float64
	warm := func(v, n int) error {
		t0 := time.Now()
		if _, _, err := sample(ctx, v, n); err != nil {
			return fmt.Errorf("warm-up of %s: %w", names[v], err)
		}
		perCall[v] = float64(time.Since(t0)) / 1e6 / float64(max(1, n))
		return nil
	}
	for v := range 2 {
		if o.Warmup > 0 {
			if err := warm(v, o.Warmup); err != nil {
				return 0, err
			}
		}
	}
	block := o.BlockCalls
	if block == 0 {
		if o.Warmup == 0 { // size the blocks from one call of each
			for v := range 2 {
				if err := warm(v, 1); err != nil {
					return 0, err
				}
			}
		}
		block = blockCalls(o.BlockTime, max(perCall[0], perCall[1]))
	}
	return block, nil
}

// relaunch restarts both variants' processes before pair p, in the pair's order, and warms each
// up again.
func relaunch(ctx context.Context, sample Sampler, o Options, names [2]string, p int) error {
	for _, v := range abba(p) {
		if err := o.Restart(ctx, v); err != nil {
			return fmt.Errorf("relaunch of %s: %w", names[v], err)
		}
		if o.Warmup > 0 {
			if _, _, err := sample(ctx, v, o.Warmup); err != nil {
				return fmt.Errorf("warm-up of %s after its relaunch: %w", names[v], err)
			}
		}
	}
	return nil
}

// runPair runs pair p: a block of each variant, in ABBA order, each reported to o.Progress. It
// returns the blocks run, and true when ctx ended before a block.
func runPair(ctx context.Context, sample Sampler, o Options, names [2]string, p, block int) ([]Block, bool, error) {
	var blocks []Block
	for _, v := range abba(p) {
		if ctx.Err() != nil {
			return blocks, true, nil
		}
		blk := Block{Pair: p, Variant: "AB"[v : v+1], Start: time.Now()}
		stop := func() {}
		if o.Window != nil {
			stop = o.Window(v)
		}
		xs, failed, err := sample(ctx, v, block)
		stop()
		if err != nil {
			return nil, false, fmt.Errorf("block %d of %s: %w", p, names[v], err)
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
	return blocks, false, nil
}

// abba is the order of the sides in pair p: A first in even pairs, B first in odd ones.
func abba(p int) [2]int {
	if p%2 == 1 {
		return [2]int{1, 0}
	}
	return [2]int{0, 1}
}

// blockCalls is the calls that fill a block of about d at perCall ms a call: at least 1, at
// most 1,000.
func blockCalls(d time.Duration, perCall float64) int {
	if !(perCall > 0) {
		return 1
	}
	n := int(math.Round(float64(d) / 1e6 / perCall))
	return min(1000, max(1, n))
}

// Analyze judges blocks (as Run makes them) on the log ratios of each pair's block medians: the
// ratio B/A (their Hodges-Lehmann shift), its interval at confidence 1 - Alpha/Looks, and the
// answer and verdict (sequential.go).
func Analyze(blocks []Block, opts Options) (*Result, error) {
	o := opts.norm()
	info, _ := result.Lookup(o.Metric)
	r := &Result{Metric: o.Metric, Unit: info.Unit, Better: string(o.Better), Blocks: blocks, Alpha: o.Alpha, Threshold: *o.Threshold,
		Method: "Hodges-Lehmann ratio of ABBA block medians, signed-rank interval"}
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
	if o.Looks > 1 {
		r.Method += fmt.Sprintf(", sequential (%d looks)", o.Looks)
	}
	judge(r, logs, o.Alpha, o.Looks)
	if math.IsInf(r.CI.Lo, 0) || math.IsInf(r.CI.Hi, 0) || r.CI.Lo == 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d pairs are too few for an interval at %.4g%% confidence", r.Pairs, 100*r.CI.Confidence))
	}
	return r, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return stats.Quantile(s, 0.5)
}
