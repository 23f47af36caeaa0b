// Package figures is the protocol between the load drivers (package load) and the engine's
// collector (internal/engine): the per-request figures of a scenario's measured calls, derived
// once (StreamMetrics) and kept where both read them (Figures, Keeper), the SLOs they are judged
// by, and the names of the values a subject reports about the client's own delays. A Go program
// drives a load through run.Run and reads these figures in run.json; it never handles them.
package figures

import (
	"sync/atomic"
	"time"

	"github.com/inferbench/inferbench/internal/base/unit"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/subject"
)

// Figures are the per-request figures of a scenario's measured calls: the distribution of every
// metric, the measured window, how many requests met the SLOs (goodput), the time slices of the
// measured phase, and the same for the current step of a sweep. Observe derives a call's
// generation metrics (StreamMetrics) once and adds them to each; Add takes a figure a call
// carries itself.
//
// The engine's collector keeps a scenario's Figures (it is a Keeper): SLO verdicts, goodput and
// sweep steps are read from the distributions and the window run.json reports. Figures is not
// safe for concurrent use: its Keeper synchronises.
//
// Note: the serving load and the engine each derived every request's generation metrics and
// kept their own distributions and window, so SLOs were judged on other samples than run.json's
// ttft_ms; one derivation, kept here, makes them the same samples.
type Figures struct {
	maxSamples int
	serving    bool // a serving load: the server's say on what it sent together is a figure of Coalescing
	slos       []SLO
	all        window    // the whole measured phase
	step       *window   // the sweep step begun last; nil outside a sweep
	turns      []*window // mode sessions: the turns' TTFT and e2e (ValueTurn); nil otherwise
	order      []string
	hists      map[string]*stats.Histogram // full-resolution copies (KeepHistograms)
	began      time.Time                   // the measured phase's start
	sliceLen   time.Duration               // 0: no slices
	slices     []*slice                    // slices.go
	spans      []span                      // the measured requests' times (steady.go)
	spanN      int                         // measured requests with a span, kept or not
}

// window is what the measured calls of one window did: the whole measured phase, or a sweep step.
type window struct {
	measured, failed, good int
	start, end             time.Time
	dists                  map[string]*stats.Dist
	coalescing             Coalescing
}

// StepSamples bounds the raw samples of a sweep step's distributions, and of the figures a load
// keeps itself over a sink that keeps none (beyond, a histogram): their figures are percentiles
// for a table row and an SLO verdict.
const StepSamples = 1 << 14

// stepMetrics are the metrics a sweep step keeps: those its row and its verdict read.
var stepMetrics = map[string]bool{"ttft_ms": true, "itl_ms": true, "tpot_ms": true, "e2e_ms": true, "ttft_sched_ms": true,
	"e2e_sched_ms": true, "schedule_lag_ms": true, ValueSendDelay: true, ValueReadDelay: true}

// New returns the figures of a scenario, holding at most maxSamples raw samples per metric
// (stats.NewDist). slo (load.Config's SLO, validated with it) judges each request; a serving
// load's measured phase is cut into slices of slice (DefaultSlice when zero, none when negative),
// a load of single calls' is not.
func New(maxSamples int, slo map[string]float64, serving bool, slice time.Duration) *Figures {
	slos, _ := ParseSLOs(slo)
	f := &Figures{maxSamples: maxSamples, serving: serving, slos: slos, all: window{dists: map[string]*stats.Dist{}}}
	if serving {
		f.sliceLen = slice
		if f.sliceLen == 0 {
			f.sliceLen = DefaultSlice
		}
	}
	return f
}

// KeepHistograms makes f keep a full-resolution histogram of every metric beside its
// distribution (scale-out merges them).
func (f *Figures) KeepHistograms() { f.hists = map[string]*stats.Histogram{} }

// Begin marks the start of the measured phase: slices are counted from here.
func (f *Figures) Begin() { f.began = time.Now() }

// Observe adds one measured call. It derives the call's generation metrics (StreamMetrics), once,
// into the distributions of the whole phase, the current step and the call's slice, and judges
// the call against the SLOs. It returns the call's output tokens and whether it streamed a token.
func (f *Figures) Observe(o subject.Observation, err error) (outputTokens int, streamed bool) {
	// A serving load counts what the server says it sent together in Coalescing; the values are
	// not metrics of their own there (a single load keeps them as such).
	var serverFirst, serverTogether float64
	said := false
	if f.serving {
		if serverFirst, said = o.Values[ValueServerFirstTogether]; said {
			serverTogether = o.Values[ValueServerTogether]
			delete(o.Values, ValueServerFirstTogether)
			delete(o.Values, ValueServerTogether)
		}
	}
	turn := -1
	if t, ok := o.Values[ValueTurn]; ok {
		delete(o.Values, ValueTurn)
		turn = int(t)
	}
	sl := f.sliceOf(o.Start, err != nil)
	f.all.measured++
	if f.step != nil {
		f.step.measured++
	}
	if err != nil {
		f.all.failed++
		if f.step != nil {
			f.step.failed++
		}
		return 0, false
	}
	if o.Start.IsZero() {
		return 0, false
	}
	f.all.widen(o)
	if f.serving {
		f.addSpan(o.Start, o.End)
	}
	if f.step != nil {
		f.step.widen(o)
	}
	var tw *window
	if turn >= 0 {
		tw = f.turn(turn)
	}
	missed := false
	if !o.FirstToken.IsZero() {
		outputTokens, streamed = StreamMetrics(o, func(m string, v float64) {
			f.Add(m, v)
			if tw != nil && (m == "ttft_ms" || m == "e2e_ms") {
				tw.add(m, v)
			}
			if sl != nil && m != "itl_ms" {
				sl.add(m, v)
			}
			for _, slo := range f.slos {
				if slo.Metric == m && v > slo.Limit {
					missed = true
				}
			}
		})
	}
	if streamed {
		f.all.coalescing.add(o.Tokens, said, serverFirst, serverTogether)
		if f.step != nil {
			f.step.coalescing.add(o.Tokens, said, serverFirst, serverTogether)
		}
	}
	if missed || (!streamed && len(f.slos) > 0) {
		return outputTokens, streamed // a request without tokens cannot meet an SLO on tokens
	}
	f.all.good++
	if f.step != nil {
		f.step.good++
	}
	return outputTokens, streamed
}

// Add adds one sample of a metric a call reported itself (latency_ms, a subject's value).
func (f *Figures) Add(name string, v float64) {
	d, ok := f.all.dists[name]
	if !ok {
		d = stats.NewDist(f.maxSamples)
		f.all.dists[name] = d
		f.order = append(f.order, name)
	}
	d.Add(v)
	if f.hists != nil {
		h, ok := f.hists[name]
		if !ok {
			h = stats.NewHistogram()
			f.hists[name] = h
		}
		h.Add(v)
	}
	if f.step != nil && stepMetrics[name] {
		d, ok := f.step.dists[name]
		if !ok {
			d = stats.NewDist(StepSamples)
			f.step.dists[name] = d
		}
		d.Add(v)
	}
}

// Each calls fn with every metric's distribution, in the order the metrics were first seen.
func (f *Figures) Each(fn func(name string, d *stats.Dist)) {
	for _, name := range f.order {
		fn(name, f.all.dists[name])
	}
}

// Histograms returns the full-resolution histograms (nil unless KeepHistograms).
func (f *Figures) Histograms() map[string]*stats.Histogram { return f.hists }

// Window returns the measured window: from the first successful call's start to the last one's
// end (zero times without any).
func (f *Figures) Window() (start, end time.Time) { return f.all.start, f.all.end }

// StartStep begins a sweep step: the calls observed from here on are also the step's, and
// Summary and Step read the step's figures.
func (f *Figures) StartStep() { f.step = &window{dists: map[string]*stats.Dist{}} }

// current is the window a load's verdicts read: the current step, else the whole phase.
func (f *Figures) current() *window {
	if f.step != nil {
		return f.step
	}
	return &f.all
}

func (w *window) widen(o subject.Observation) {
	if w.start.IsZero() || o.Start.Before(w.start) {
		w.start = o.Start
	}
	if o.End.After(w.end) {
		w.end = o.End
	}
}

// turn returns the window of turn t of the sessions, made when t is new (with those before it).
func (f *Figures) turn(t int) *window {
	for len(f.turns) <= t {
		f.turns = append(f.turns, &window{dists: map[string]*stats.Dist{}})
	}
	return f.turns[t]
}

// add adds a sample of metric m to a window of its own (a turn), of at most StepSamples raw
// samples.
func (w *window) add(m string, v float64) {
	d, ok := w.dists[m]
	if !ok {
		d = stats.NewDist(StepSamples)
		w.dists[m] = d
	}
	d.Add(v)
}

// Turns summarises the turns of mode sessions (the scenario's "turns" section): each turn's
// requests that streamed, their TTFT and end-to-end latency, read from the one derivation of
// each request (StreamMetrics), as run.json's ttft_ms and e2e_ms are; nil outside mode sessions.
func (f *Figures) Turns() []result.TurnStat {
	if f.turns == nil {
		return nil
	}
	out := make([]result.TurnStat, 0, len(f.turns))
	for t, w := range f.turns {
		st := result.TurnStat{Turn: t + 1}
		if x, ok := w.summary("e2e_ms"); ok {
			st.Requests, st.E2EP50, st.E2EP99 = x.N, x.Median, x.P99
		}
		if x, ok := w.summary("ttft_ms"); ok {
			st.TTFTP50, st.TTFTP99 = x.Median, x.P99
		}
		out = append(out, st)
	}
	return out
}

// Coalescing returns what the client read together (and the server sent together, where it
// says) in the whole measured phase and in the window a load's verdicts read: the current sweep
// step, else the whole phase.
func (f *Figures) Coalescing() (phase, current Coalescing) {
	return f.all.coalescing, f.current().coalescing
}

// Summary returns the summary of metric m's distribution in the window a load's verdicts read:
// the current sweep step, else the whole measured phase; false when no call reported m there.
func (f *Figures) Summary(m string) (stats.Summary, bool) { return f.current().summary(m) }

func (w *window) summary(m string) (stats.Summary, bool) {
	d, ok := w.dists[m]
	if !ok {
		return stats.Summary{}, false
	}
	x, err := d.Summary()
	return x, err == nil
}

// Step summarises the current window (the sweep step begun last, else the whole measured phase)
// as a step of name: its rate, goodput, percentiles and SLO verdict, judged on its distributions.
func (f *Figures) Step(name string) result.SweepStep {
	w := f.current()
	r := result.SweepStep{Name: name, Requests: w.measured, Failed: w.failed, Stats: map[string]float64{}}
	if win := w.end.Sub(w.start).Seconds(); win > 0 {
		r.RPS = float64(w.measured-w.failed) / win
		r.GoodputRPS = float64(w.good) / win
	}
	for _, m := range []string{"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"} {
		if x, ok := w.summary(m); ok {
			r.Stats[m+".p50"], r.Stats[m+".p99"] = x.Median, x.P99
		}
	}
	if x, ok := w.summary("schedule_lag_ms"); ok {
		r.LagP99 = x.P99
	}
	if len(f.slos) > 0 {
		hold, failures := judge(f.slos, w.summary, w.failed)
		r.SLOsHold, r.SLOFailures = &hold, failures
	}
	return r
}

// Keeper is an optional ability of a load.Sink that keeps a scenario's Figures, feeding it every
// measured call (the engine's collector). A serving load reads its SLO verdicts, goodput, sweep
// steps and slices from the keeper's Figures rather than deriving them again; over a sink that
// keeps none, it keeps its own.
type Keeper interface {
	// WithFigures calls f with the figures, holding the lock the sink observes calls under.
	WithFigures(f func(*Figures))
}

// derivations counts StreamMetrics' calls in this process: each measured request is derived once,
// wherever its figures are read (load's TestDerivedOncePerRequest holds the engine to it).
var derivations atomic.Int64

// Derivations returns how many times StreamMetrics has run in this process.
func Derivations() int64 { return derivations.Load() }

// StreamMetrics passes the per-request generation metrics of a streamed observation to f, as
// docs/metrics.md ("Streaming") defines them, and returns its output tokens: the subject's figure,
// else the tokens its content events carried. ok is false when the call streamed no token.
// Figures.Observe calls it once per measured request; every figure of those metrics (run.json's
// distributions, SLOs, goodput, sweep steps, slices) is read from what it added.
func StreamMetrics(o subject.Observation, f func(metric string, v float64)) (out int, ok bool) {
	if o.FirstToken.IsZero() || o.Start.IsZero() {
		return 0, false
	}
	derivations.Add(1)
	return Rederive(o, f)
}

// Rederive is StreamMetrics uncounted: the capacity search reads a request's figures again, by
// the same definitions, for its trial.
func Rederive(o subject.Observation, f func(metric string, v float64)) (out int, ok bool) {
	if o.FirstToken.IsZero() || o.Start.IsZero() {
		return 0, false
	}
	f("ttft_ms", unit.MS(o.FirstToken.Sub(o.Start)))
	f("e2e_ms", unit.MS(o.End.Sub(o.Start)))
	if !o.Scheduled.IsZero() && !o.Scheduled.Equal(o.Start) {
		f("ttft_sched_ms", unit.MS(o.FirstToken.Sub(o.Scheduled)))
		f("e2e_sched_ms", unit.MS(o.End.Sub(o.Scheduled)))
	}
	itl(o.Tokens, f)
	out = o.OutputTokens
	if out == 0 {
		for _, t := range o.Tokens {
			out += max(t.Tokens, 1)
		}
	}
	if out > 1 {
		f("tpot_ms", unit.MS(o.End.Sub(o.FirstToken))/float64(out-1))
	}
	return out, true
}

// itl passes the inter-token latencies of one request to f, as the events arrived: the gap before
// each content event, spread over the tokens it carries (the server put them in one event). Events
// that came in one read of the socket arrived together: the first has the whole gap since the
// previous read and the others a gap of zero, which is what the client saw. The client cannot
// tell when, within that gap, the server sent each of them; itl_coalesced_rate says how many gaps
// are of this kind, and the scenario is warned when the server sent them apart (load's serving sink).
//
// Note: these gaps used to be spread evenly over the events of one read. That made a plausible
// number that neither the client nor the server saw, and hid the server's bursts: at 512 streams
// on 2 cores ITL p99 read 2.6-3.2 ms low.
func itl(events []subject.TokenEvent, f func(metric string, v float64)) {
	for i := 1; i < len(events); i++ {
		n := max(events[i].Tokens, 1)
		gap := unit.MS(events[i].At.Sub(events[i-1].At)) / float64(n)
		for range n {
			f("itl_ms", gap)
		}
	}
}
