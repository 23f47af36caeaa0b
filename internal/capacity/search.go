// Package capacity finds the highest arrival rate a server holds within its SLOs: a search over
// open-loop (Poisson) rates whose every step is a sequential test of the SLOs' attainment, ending
// in a rate, a one-sided lower confidence bound on it, the steps taken and the curve of attainment
// against rate.
//
// A step sends requests at its rate and is judged at looks after Min, 2×Min, 4×Min requests (up to
// Max): pass when every objective's attainment (the fraction of requests meeting it) is above its
// target with confidence, fail when one is below it with confidence, and not yet known otherwise,
// which extends the step to the next look. The confidence comes from batch means of the
// attainment indicator, not the binomial: queued requests meet or miss together.
//
// The rates follow MLPerf LoadGen's shape: double (or halve) from the start until a step passes and
// one fails, then bisect between the highest pass and the lowest fail until they are within
// Tolerance. The estimate is where the isotonic (non-increasing) fit of attainment against rate,
// over every step, crosses the target (AIPerf fits its margins so), refined by a line through the
// steps near that crossing; the lower bound is the highest rate that passed. A step at a rate above the true capacity passes only by chance, at most
// alpha per look, and the looks of every step share the bound's 5%.
//
// Note: LoadGen's early stopping is binomial (every query independent) and AIPerf bootstraps over
// requests; at the knee a request queues behind the ones before it, and the intervals they give
// there are too narrow by the length of a busy period. Batch means keep the correlation.
package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"
)

// Prober runs one step: an open loop of Poisson arrivals at t.Rate() that sends t.Warmup()
// requests unmeasured, then up to t.Max() measured requests, and passes each measured request's figures to
// t.Observe, stopping once Observe returns true. It returns when its requests in flight have
// ended. An error ends the search.
type Prober func(ctx context.Context, t *Trial) error

// Options configure a search. Zero fields take the defaults.
type Options struct {
	Objectives []Objective
	// Start is the first rate tried, in requests per second (required).
	Start float64
	// Min is the measured requests of a step's first look (default: 200, or MinMisses in each
	// of its batches at the highest target); Max the most a step
	// sends (default 8 × Min, at least 3,200).
	Min, Max int
	// Warmup is the requests a step sends before its measured ones, unjudged: a step starts on
	// an idle server, whose first requests meet their SLOs more easily than a loaded one's
	// (default Min / 4).
	Warmup int
	// MaxSteps bounds the steps (default 12).
	MaxSteps int
	// Tolerance is the width of the bracket between the highest pass and the lowest fail, as a
	// fraction of the lowest fail, at which the search stops (default 0.03).
	Tolerance float64
	// Confidence is the one-sided confidence of the lower bound (default 0.95).
	Confidence float64
}

func (o Options) withDefaults() Options {
	if o.Min <= 0 {
		o.Min = 200
		// Each batch of a look should hold a few of the requests the target allows to miss
		// (MinMisses): at p99, misses come in bursts a few hundred requests apart, and 400
		// requests without one say little about the share of misses.
		for _, ob := range o.Objectives {
			o.Min = max(o.Min, int(math.Ceil(MinMisses*batches/(1-ob.Target)-1e-9)))
		}
	}
	if o.Max <= 0 {
		// Near the knee a step's attainment reads within a few points only after thousands of
		// requests (its misses cluster), and the estimate pools such steps.
		o.Max = max(8*o.Min, 3200)
	}
	o.Max = max(o.Max, o.Min)
	if o.Warmup <= 0 {
		o.Warmup = o.Min / 4
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = 12
	}
	if o.Tolerance <= 0 {
		o.Tolerance = 0.03
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = 0.95
	}
	return o
}

// MinMisses is the misses the target allows in each batch of a step's first look: the first look
// is at least MinMisses × 10 batches / (1 - target) requests (2,000 at p99, 200 at p90).
const MinMisses = 2

// Step is one step of a search, as run.json's extra.capacity.steps keeps it.
type Step struct {
	Rate      float64    `json:"rate_rps"`
	Requests  int        `json:"requests"` // the measured requests the verdict was taken on
	Looks     int        `json:"looks"`
	Verdict   Verdict    `json:"verdict"`
	Estimates []Estimate `json:"objectives"` // by objective, as Result.Objectives
	Seconds   float64    `json:"seconds"`    // the step's wall time
	// ClientBound says why the client, not the server, may have set the step's figures (its
	// delays: schedule lag, late reads, its CPU); the step's verdict is then not yet known, and
	// neither the bracket, the bound nor the estimate reads it.
	ClientBound string `json:"client_bound,omitempty"`
}

// ClientBoundError says that the client, not the server, limited a search: its steps at Rate
// (and above) were client_bound twice running, their figures the client's own delays (Why),
// which a search reading them as the server's would turn into a fail and a capacity too low.
// The search judged only below Rate: the capacity is at least Lower, the highest rate that
// passed there. It is the search's error only when no step passed (Lower 0); otherwise its
// text is the result's warning, beside the answer "at least Lower".
type ClientBoundError struct {
	Rate  float64
	Why   string
	Lower float64
}

func (e *ClientBoundError) Error() string {
	at := "no step below it passed, so there is no capacity to report"
	if e.Lower > 0 {
		at = fmt.Sprintf("the capacity is at least %.4g req/s, the highest rate the search could judge", e.Lower)
	}
	return fmt.Sprintf("capacity: the client limited the search: the step at %.4g req/s was client_bound twice running (%s), its figures the client's delays, not the server's; %s. "+
		"To measure higher, give the client room: fewer benchmarks or searches at once, a quieter machine (nice the others), "+
		"or the load from a client machine of its own", e.Rate, e.Why, at)
}

// Point is one point of the attainment curve: the isotonic fit of one objective at a rate.
type Point struct {
	Rate       float64 `json:"rate_rps"`
	Attainment float64 `json:"attainment"`
}

// Section is the name of run.json's extra section that holds a capacity search's Result (load
// mode capacity writes it, report draws it).
const Section = "capacity"

// Result is what a search found.
type Result struct {
	// CapacityRPS is the estimate: the lowest rate at which an objective's fitted attainment
	// crosses its target, within the bracket the steps left. 0 when no step held the
	// objectives (passed, or ran all its requests not yet known reading above its targets).
	CapacityRPS float64 `json:"capacity_rps"`
	// LowerRPS is the one-sided lower confidence bound: the highest rate whose step passed.
	LowerRPS float64 `json:"capacity_lower_rps"`
	// UpperRPS is the lowest rate whose step did not pass (0 when every step passed).
	UpperRPS   float64     `json:"upper_rps,omitempty"`
	Confidence float64     `json:"confidence"`
	Objectives []Objective `json:"objectives"`
	Steps      []Step      `json:"steps"`
	// Curve is the fitted attainment against rate, by objective (as Objectives), at the steps'
	// rates in increasing order.
	Curve [][]Point `json:"curve"`
	// ClientLimitRPS is the lowest rate whose step the client paced twice running (0 when none),
	// and ClientBound why: the search judged only below it. ClientLimited says when that was the
	// end of what it could say.
	ClientLimitRPS float64 `json:"client_limit_rps,omitempty"`
	ClientBound    string  `json:"client_bound,omitempty"`
	// Warnings say where the answer is weaker than it reads.
	Warnings []string `json:"warnings,omitempty"`
}

// ClientLimited reports whether the client, not the server, ended the search: no step below the
// client's limit failed, so the answer is only that the capacity is at least LowerRPS (0 when no
// step below the limit passed either).
func (r Result) ClientLimited() bool {
	return r.ClientLimitRPS > 0 && (r.UpperRPS == 0 || r.UpperRPS >= r.ClientLimitRPS)
}

// alphaPerLook is the one-sided level of each look: the bound's 1 - Confidence shared by the
// looks of the steps that can pass by chance. Only a step above the true capacity can; the
// bisection puts about four there, each with up to four looks.
func (o Options) alphaPerLook() float64 {
	looks := 1
	for n := o.Min; n < o.Max; n *= 2 {
		looks++
	}
	return (1 - o.Confidence) / float64(4*looks)
}

// Search runs steps through p until the highest rate within the objectives is bracketed to
// Tolerance or MaxSteps are spent. An interrupted search (ctx done) returns what its steps found
// so far, with ctx's error.
func Search(ctx context.Context, p Prober, o Options) (Result, error) {
	o = o.withDefaults()
	if len(o.Objectives) == 0 {
		return Result{}, errors.New("capacity: no objectives (give an SLO)")
	}
	if !(o.Start > 0) || math.IsInf(o.Start, 0) {
		return Result{}, fmt.Errorf("capacity: start rate %v must be above 0", o.Start)
	}
	s := &search{ctx: ctx, p: p, o: o, alpha: o.alphaPerLook(), hi: math.Inf(1),
		res: Result{Confidence: o.Confidence, Objectives: o.Objectives}}
	converged := s.bisect()
	s.rejudge()
	s.res.finish(s.bound, s.hi)
	if converged && s.err == nil && !s.res.ClientLimited() {
		s.confirm()
		return s.res, s.err
	}
	s.res.finish(s.bound, s.hi)
	s.conclude()
	return s.res, s.err
}

// search is the state of one Search: the steps run so far, the bracket they set and the first
// error a step met.
type search struct {
	ctx   context.Context
	p     Prober
	o     Options
	alpha float64
	res   Result
	// trials are the steps' trials, by step, as res.Steps.
	trials []*Trial
	// bound is the highest rate that passed. lo and hi bracket the capacity for the bisection:
	// a step not yet known when it ran out of requests has its attainment near the target, and
	// moves the bracket by its point estimate, but only a pass raises the bound.
	bound, lo, hi float64
	err           error
}

// bisect doubles the rate from Start until a step fails, then halves the bracket until it is
// within Tolerance (true) or MaxSteps are spent or a step ends the search (false).
func (s *search) bisect() bool {
	rate := s.o.Start
	for len(s.res.Steps) < s.o.MaxSteps {
		if _, ok := s.probe(rate); !ok {
			break
		}
		s.bracket()
		top := s.hi // the rates above are failed, or beyond the client
		if s.res.ClientLimitRPS > 0 {
			top = min(s.hi, s.res.ClientLimitRPS)
		}
		switch {
		case math.IsInf(top, 1):
			rate *= 2
		case s.lo == 0:
			rate = min(rate, top) / 2
		default:
			rate = (s.lo + top) / 2
		}
		if s.lo > 0 && !math.IsInf(top, 1) && (top-s.lo)/top <= s.o.Tolerance {
			return true
		}
	}
	return false
}

// confirm spends the steps a converged search has left. Near the knee steps may end not yet
// known, and leave no pass close below the estimate: the steps left go to one, each further
// below the estimate (5%, 10%, 20%, ...).
func (s *search) confirm() {
	for gap := 0.05; len(s.res.Steps) < s.o.MaxSteps && s.bound < (1-gap)*s.res.CapacityRPS && gap < 0.9; gap *= 2 {
		st, ok := s.probe((1 - gap) * s.res.CapacityRPS)
		if !ok || st.Verdict == Pass {
			break
		}
	}
	s.rejudge()
	s.res.finish(s.bound, s.hi)
}

// conclude says what a search that did not converge found: no capacity where no step held the
// objectives, ctx's error where it was cut short, the client's limit where the client ended it,
// and otherwise a warning why the bracket stayed open.
func (s *search) conclude() {
	res, o, lo, hi, bound := &s.res, s.o, s.lo, s.hi, s.bound
	if !s.held() {
		// No step held the objectives: the fit of steps that all missed (it crosses the
		// target at the lowest rate tried) is no rate the server holds.
		res.CapacityRPS = 0
	}
	if s.err == nil && s.ctx.Err() != nil {
		s.err = s.ctx.Err()
	}
	if s.err != nil {
		return
	}
	if res.ClientLimited() {
		res.CapacityRPS = 0 // no estimate: the steps above the bound were the client's
		cb := &ClientBoundError{Rate: res.ClientLimitRPS, Why: res.ClientBound, Lower: res.LowerRPS}
		res.Warnings = append(res.Warnings, cb.Error())
		if res.LowerRPS == 0 {
			s.err = cb
		}
		return
	}
	switch {
	case math.IsInf(hi, 1) && bound >= lo:
		res.Warnings = append(res.Warnings, fmt.Sprintf("capacity: every step passed, up to %.4g req/s: the capacity is above that (raise the start rate)", lo))
	case math.IsInf(hi, 1):
		res.Warnings = append(res.Warnings, fmt.Sprintf("capacity: no step failed, but the steps up to %.4g req/s are not yet known (their attainment reads above the target, not surely; %s): give more requests or steps",
			lo, passedUpTo(bound)))
	case bound == 0:
		res.Warnings = append(res.Warnings, fmt.Sprintf("capacity: no step passed, down to %.4g req/s (lower the start rate, or the SLOs cannot be met)", hi))
	default:
		res.Warnings = append(res.Warnings, fmt.Sprintf("capacity: %d steps left the bracket %.4g-%.4g req/s wider than %.0f%%", o.MaxSteps, lo, hi, 100*o.Tolerance))
	}
}

// hint is the clusters of misses a step at rate should expect: as long as those of the step
// nearest above it (queues, and with them clusters, grow with the rate), 1 without one.
// A pass taken early that no longer holds saw too few requests to say how misses cluster.
func (s *search) hint(rate float64) float64 {
	near, l := math.Inf(1), 1.0
	for _, t := range s.trials {
		if (t.verdict == Unknown && t.judged < t.max) || t.bound != "" {
			continue
		}
		if t.rate > rate && t.rate < near {
			near, l = t.rate, t.seen
		}
	}
	return l
}

// step runs one step at rate and returns false when the search must end.
func (s *search) step(rate float64) (Step, bool) {
	o := s.o
	t := newTrial(rate, o.Objectives, o.Min, o.Max, s.alpha, s.hint(rate))
	t.warmup = o.Warmup
	began := time.Now()
	s.err = s.p(s.ctx, t)
	t.finish()
	st := Step{Rate: rate, Requests: t.judged, Looks: t.looks, Verdict: t.verdict, Estimates: t.est, Seconds: time.Since(began).Seconds(), ClientBound: t.bound}
	if t.looks > 0 {
		s.res.Steps = append(s.res.Steps, st)
		s.trials = append(s.trials, t)
	}
	if s.err != nil || s.ctx.Err() != nil {
		return st, false
	}
	if t.looks == 0 {
		s.err = fmt.Errorf("capacity: the step at %.4g req/s measured %d requests, fewer than the %d of its first look", rate, t.prefix, o.Min)
		return st, false
	}
	if st.Verdict == Pass {
		s.bound = max(s.bound, rate)
	}
	return st, true
}

// probe runs a step at rate, and runs it again when the client bound it (a passing burst of
// other work on the machine). A second client_bound step makes its rate the client's limit:
// the search goes on below it, where the client does not distort what it judges. A limit
// found again before any step passed ends the search (the client paces whatever the rate).
func (s *search) probe(rate float64) (Step, bool) {
	st, ok := s.step(rate)
	if ok && st.ClientBound != "" && len(s.res.Steps) < s.o.MaxSteps {
		st, ok = s.step(rate)
	}
	if !ok || st.ClientBound == "" {
		return st, ok
	}
	again := s.res.ClientLimitRPS > 0
	if !again || rate < s.res.ClientLimitRPS {
		s.res.ClientLimitRPS = rate
	}
	s.res.ClientBound = st.ClientBound
	return st, !again || s.bound > 0
}

// rejudge judges every pass again with the clusters of misses of the step nearest above it:
// a pass is judged with the clusters seen up to its step, and one taken before the search had
// a step above it may not hold with that step's.
func (s *search) rejudge() {
	s.bound = 0
	for i, t := range s.trials {
		s.res.Steps[i].Verdict = t.rejudge(s.hint(t.rate))
		s.res.Steps[i].Estimates = t.est
		if s.res.Steps[i].Verdict == Pass {
			s.bound = max(s.bound, t.rate)
		}
	}
}

// bracket sets lo and hi from every step so far, judged again: a pass, or a step not yet
// known whose attainment reads above its target over all its requests, holds the rate; a
// fail, or a step not yet known reading below, does not. A pass taken early (at a look
// before the last) that no longer holds says little either way: near saturation the first
// requests of a step, sent to an idle server, meet their SLOs before the queue grows.
func (s *search) bracket() {
	s.rejudge()
	s.lo, s.hi = 0, math.Inf(1)
	for i, st := range s.res.Steps {
		switch {
		case st.ClientBound != "":
		case st.Verdict == Pass:
			s.lo = max(s.lo, st.Rate)
		case st.Verdict == Unknown && s.trials[i].judged < s.o.Max:
		case st.Verdict == Unknown && st.above(s.o.Objectives):
			s.lo = max(s.lo, st.Rate)
		default:
			s.hi = min(s.hi, st.Rate)
		}
	}
}

// held reports whether a step held the objectives as the bracket reads them: a pass, or a
// step not yet known that ran all its requests and reads above its targets.
func (s *search) held() bool {
	for i, st := range s.res.Steps {
		if st.ClientBound == "" && (st.Verdict == Pass || st.Verdict == Unknown && s.trials[i].judged >= s.o.Max && st.above(s.o.Objectives)) {
			return true
		}
	}
	return false
}

// passedUpTo says how far the steps passed: the lower bound's rate, or that none did.
func passedUpTo(bound float64) string {
	if bound == 0 {
		return "none passed"
	}
	return fmt.Sprintf("passed up to %.4g req/s", bound)
}

// above reports whether every objective's attainment is at or above its target.
func (s Step) above(o []Objective) bool {
	for j, e := range s.Estimates {
		if e.Attainment < o[j].Target {
			return false
		}
	}
	return true
}

// finish sets the bound, the fitted curve and the estimate from the steps.
func (r *Result) finish(lo, hi float64) {
	r.LowerRPS = lo
	if !math.IsInf(hi, 1) {
		r.UpperRPS = hi
	}
	var steps []Step
	for _, s := range r.Steps {
		if s.ClientBound == "" { // the client's figures, not the server's
			steps = append(steps, s)
		}
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].Rate < steps[j].Rate })
	est := math.Inf(1)
	r.Curve = make([][]Point, len(r.Objectives))
	for j, o := range r.Objectives {
		xs, ys, ws := make([]float64, len(steps)), make([]float64, len(steps)), make([]float64, len(steps))
		for i, s := range steps {
			xs[i], ys[i], ws[i] = s.Rate, s.Estimates[j].Attainment, max(s.Estimates[j].EffectiveN, 1)
		}
		fit := antitonic(ys, ws)
		for i := range xs {
			r.Curve[j] = append(r.Curve[j], Point{Rate: xs[i], Attainment: fit[i]})
		}
		ns := make([]float64, len(steps))
		for i, s := range steps {
			ns[i] = float64(s.Requests)
		}
		est = min(est, local(xs, ys, ns, o.Target, crossing(xs, fit, o.Target)))
	}
	if math.IsInf(est, 1) {
		est = lo // every fitted attainment is above its target: at least the bound
	}
	// The estimate stays between the confident verdicts: at least the highest pass, at most
	// the lowest fail. A step not yet known bounds it no more than the fit says: one such step
	// reads several points of attainment off near the knee.
	failed := math.Inf(1)
	for _, s := range steps {
		if s.Verdict == Fail {
			failed = min(failed, s.Rate)
		}
	}
	r.CapacityRPS = math.Max(lo, math.Min(est, failed))
}

// crossing is the rate at which a non-increasing fit (ys at increasing xs) falls below target,
// interpolated linearly between the last point at or above it and the first below; +Inf when it
// never does, the first rate when it starts below.
func crossing(xs, ys []float64, target float64) float64 {
	for i := range xs {
		if ys[i] >= target {
			continue
		}
		if i == 0 {
			return xs[0]
		}
		x0, y0, x1, y1 := xs[i-1], ys[i-1], xs[i], ys[i]
		if y0 == y1 {
			return x0
		}
		return x0 + (x1-x0)*(y0-target)/(y0-y1)
	}
	return math.Inf(1)
}

// antitonic is the weighted least-squares non-increasing fit of ys (pool adjacent violators).
func antitonic(ys, ws []float64) []float64 {
	type block struct {
		sum, w float64
		n      int
	}
	var bs []block
	for i, y := range ys {
		bs = append(bs, block{y * ws[i], ws[i], 1})
		for len(bs) > 1 {
			a, b := bs[len(bs)-2], bs[len(bs)-1]
			if a.sum/a.w >= b.sum/b.w {
				break
			}
			bs = append(bs[:len(bs)-2], block{a.sum + b.sum, a.w + b.w, a.n + b.n})
		}
	}
	out := make([]float64, 0, len(ys))
	for _, b := range bs {
		for range b.n {
			out = append(out, b.sum/b.w)
		}
	}
	return out
}

// local refines c, where the isotonic fit crosses target, by a straight line fitted (least
// squares weighted by requests) to the steps within window of it: near the knee attainment falls
// about linearly with rate, and a step's attainment there is noisy (its misses cluster), so the
// line pools every step near the knee where the isotonic fit's crossing interpolates between
// the two beside it. It returns c where fewer than two rates lie within the window or the line
// does not fall.
func local(xs, ys, ws []float64, target, c float64) float64 {
	if math.IsInf(c, 0) || c <= 0 {
		return c
	}
	for range 3 {
		var sw, sx, sy, sxx, sxy float64
		rates := 0
		last := math.NaN()
		for i, x := range xs {
			if math.Abs(x-c) > window*c {
				continue
			}
			w := ws[i]
			sw += w
			sx += w * x
			sy += w * ys[i]
			sxx += w * x * x
			sxy += w * x * ys[i]
			if x != last {
				rates++
				last = x
			}
		}
		if rates < 2 {
			return c
		}
		mx, my := sx/sw, sy/sw
		vxx, vxy := sxx/sw-mx*mx, sxy/sw-mx*my
		if !(vxx > 0) || vxy >= 0 {
			return c
		}
		b := vxy / vxx
		next := mx + (target-my)/b
		// The line holds near the steps it was fitted to: its crossing stays within the window.
		next = max(c*(1-window), min(next, c*(1+window)))
		if math.Abs(next-c) <= 1e-3*c {
			return next
		}
		c = next
	}
	return c
}

// window is the half-width of local's window, as a fraction of the rate it is centred on.
const window = 0.1
