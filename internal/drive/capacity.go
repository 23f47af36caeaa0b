package drive

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/inferbench/inferbench/internal/capacity"
	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

func init() {
	load.RegisterDriver(load.ModeCapacity, driveCapacity)
	result.Define(
		result.Info{Name: "capacity_rps", Unit: "1/s", Better: result.Higher, Doc: "capacity: the highest Poisson arrival rate whose SLOs hold, where the fitted attainment crosses its target"},
		result.Info{Name: "capacity_lower_rps", Unit: "1/s", Better: result.Higher, Doc: "capacity: one-sided 95% lower confidence bound of capacity_rps (the highest rate whose step passed)"},
		result.Info{Name: "capacity_steps", Unit: "steps", Better: result.Lower, Doc: "capacity: the open-loop steps the search took"},
	)
}

// driveCapacity is mode capacity: a search over Poisson arrival rates for the highest rate whose SLOs
// hold (capacity.Search). Each step is an open loop that sends its warm-up, then measured
// requests until its verdict is known; it is a window of the scenario's figures and a row of the
// "sweep" table, as a sweep's steps are. The result is "capacity_rps" with its lower bound
// "capacity_lower_rps", and the search in the "capacity" section (steps, verdicts, the curve of
// attainment against rate). A step the client paced (client_bound, with a delay of
// capacity.ClientShare of the tightest limit) is not judged and runs again; when the client paces
// it again the search judges only below that rate, and where nothing below failed its answer is
// "at least capacity_lower_rps", the client's limit capacity_client_limit_rps beside it (a
// capacity.ClientBoundError, its steps kept, when nothing below passed either).
func driveCapacity(ctx context.Context, s subject.Subject, c load.Config, sink load.Sink) error {
	res, err := searchCapacity(ctx, s, c, sink)
	rep, _ := sink.(load.Reporter)
	if rep == nil || len(res.Steps) == 0 {
		return err
	}
	// A search the client stopped, or the server's failures, has no answer to keep or gate on,
	// only its steps and why; nor has one in which no step held the objectives (CapacityRPS 0:
	// the fit of steps that all missed is no rate the server holds).
	cb, sf := (*capacity.ClientBoundError)(nil), (*load.ServerFailingError)(nil)
	switch {
	case errors.As(err, &cb) || errors.As(err, &sf):
	case res.ClientLimited():
		// The client limited the search: the capacity is at least the bound it judged.
		rep.Value("capacity_lower_rps", res.LowerRPS)
		rep.Value("capacity_client_limit_rps", res.ClientLimitRPS)
	case res.CapacityRPS > 0:
		rep.Value("capacity_rps", res.CapacityRPS)
		rep.Value("capacity_lower_rps", res.LowerRPS)
	}
	rep.Value("capacity_steps", float64(len(res.Steps)))
	rep.Extra(capacity.Section, res)
	for _, w := range res.Warnings {
		rep.Warn(w)
	}
	return err
}

// searchCapacity runs the search of mode capacity and returns what it found, without reporting
// the result's values (the steps are reported as a sweep's).
func searchCapacity(ctx context.Context, s subject.Subject, c load.Config, sink load.Sink) (capacity.Result, error) {
	cc := load.CapacityConfig{}
	if c.Capacity != nil {
		cc = *c.Capacity
	}
	obj, err := capacity.Objectives(c.SLO, cc.Attainment)
	if err != nil {
		return capacity.Result{}, fmt.Errorf("mode capacity: %w", err)
	}
	w := &sweep{c: c, lagged: map[string][]string{}}
	w.rep, _ = sink.(load.Reporter)
	w.kept = keeping(sink, c)
	defer w.report()

	start := cc.Start
	if start == 0 {
		top, err := w.throughput(ctx, s)
		if err != nil || ctx.Err() != nil {
			return capacity.Result{}, err
		}
		w.value("max_rps", top.RPS)
		start = top.RPS / 2
		if !(start > 0) {
			return capacity.Result{}, fmt.Errorf("mode capacity: the throughput step completed no request, so there is no rate to start from (give capacity.start)")
		}
	}
	opt := capacity.Options{Objectives: obj, Start: start, Min: cc.MinRequests, Max: cc.MaxRequests,
		Warmup: cc.WarmupRequests, MaxSteps: cc.MaxSteps, Tolerance: cc.Tolerance}
	k := uint64(0)
	server := serverOf(s)
	probe := func(ctx context.Context, t *capacity.Trial) error {
		k++
		sc := c
		warm, n := t.Warmup(), t.Max()
		sc.WarmupIterations, sc.MeasurementIterations = &warm, &n
		sc.WarmupTime, sc.Duration, sc.RateRamp = 0, 0, nil
		sc.Seed = c.Seed + k // each step its own arrivals
		offsets, nWarm := sendOffsets(sc, t.Rate())
		base := w.base
		name := fmt.Sprintf("capacity=%.4g", t.Rate())
		var sent *servingSink
		judged := &trialSubject{Subject: s, t: t, first: base + nWarm}
		st, err := w.step(name, t.Rate(), func(ss *servingSink) error {
			sent = ss
			judged.stop = &ss.stop
			return dispatch(ctx, judged, sc, offsets, nWarm, ss, base)
		})
		w.base = base + len(offsets)
		if err == nil && ctx.Err() == nil {
			if f := judged.health.failing(); f != nil {
				f.Rate, f.Server = t.Rate(), server
				return f
			}
		}
		// A step the client paced may say little of the server: its lag delays sends (the server
		// sees another rate) and its late reads merge and lengthen the gaps it reads.
		if why := append(clientBound(st, true), w.lagged[name]...); len(why) > 0 {
			t.ClientBound(strings.Join(why, ", "), clientDelay(st, sent, obj))
		}
		return err
	}
	return capacity.Search(ctx, probe, opt)
}

// clientDelay is the largest of a step's client delays (p99, ms) that can move a figure its
// objectives judge: the schedule lag and the send delay always (the server sees another arrival
// process, and the _sched figures include them), as the event loop's stalls where arrivals are
// read times (no kernel stamps); the read delay, with kernel stamps, only where late reads merged
// events that an objective times apart: first tokens (ttft_ms, ttft_sched_ms, tpot_ms) or gaps
// (itl_ms). NaN when none was measured.
func clientDelay(r stepResult, ss *servingSink, obj []capacity.Objective) float64 {
	l := ss.lags()
	judged := map[string]bool{}
	for _, o := range obj {
		for _, lim := range o.Limits {
			judged[lim.Metric] = true
		}
	}
	d := math.NaN()
	take := func(v float64) {
		if !math.IsNaN(v) && !(v <= d) {
			d = v
		}
	}
	take(r.LagP99)
	take(l.send)
	if math.IsNaN(l.read) {
		take(l.stall)
		return d
	}
	first, gaps, _ := ss.coalesced().Merged()
	if first > figures.CoalescedWarning && (judged["ttft_ms"] || judged["ttft_sched_ms"] || judged["tpot_ms"]) ||
		gaps > figures.CoalescedWarning && judged["itl_ms"] {
		take(l.read)
	}
	return d
}

// trialSubject passes a capacity step's measured calls to its trial as they end, and stops the
// step's sending once the trial has a verdict, or once its calls say the server is gone or fails
// every request (health).
type trialSubject struct {
	subject.Subject
	t      *capacity.Trial
	first  int // the index of the first measured request
	stop   *atomic.Bool
	health health
}

func (j *trialSubject) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	o, err := j.Subject.Do(ctx, r)
	// A call the run cut (an interrupt) says nothing of the server; one that ran out of its
	// timeout (--timeout) failed, and misses its objectives.
	if errors.Is(ctx.Err(), context.Canceled) {
		return o, err
	}
	if j.health.add(failure(o, err), err) {
		j.stop.Store(true)
	}
	if !r.Warmup {
		if o.Scheduled.IsZero() {
			o.Scheduled = r.Scheduled
		}
		if j.t.Observe(r.Index-j.first, measures(o, err)) {
			j.stop.Store(true)
		}
	}
	return o, err
}

// measures are a call's figures as the capacity search judges them: figures.StreamMetrics'
// derivation, read again (figures.Rederive); itl_ms the longest gap of the request, as goodput
// judges it, and the _sched figures the unscheduled ones where the call had no schedule.
func measures(o subject.Observation, err error) capacity.Measures {
	nan := math.NaN()
	m := capacity.Measures{TTFT: nan, ITLMax: nan, TPOT: nan, E2E: nan, TTFTSched: nan, E2ESched: nan}
	if err != nil || o.Start.IsZero() || noOutput(o) {
		m.Failed = true // a request that gave no output failed, whatever its status
		return m
	}
	sched := false
	figures.Rederive(o, func(metric string, v float64) {
		switch metric {
		case "ttft_ms":
			m.TTFT = v
		case "e2e_ms":
			m.E2E = v
		case "ttft_sched_ms":
			m.TTFTSched, sched = v, true
		case "e2e_sched_ms":
			m.E2ESched = v
		case "itl_ms":
			if math.IsNaN(m.ITLMax) || v > m.ITLMax {
				m.ITLMax = v
			}
		case "tpot_ms":
			m.TPOT = v
		}
	})
	if !sched {
		m.TTFTSched, m.E2ESched = m.TTFT, m.E2E
	}
	return m
}

// noOutput reports a call that ended without error and without output: no content token
// (a stream of 200s with nothing in it).
func noOutput(o subject.Observation) bool {
	return o.FirstToken.IsZero() && (o.Streamed || o.OutputTokens == 0)
}

// failure names why a capacity step's call failed, or is "" when it did not: "connection
// refused" (nothing listens: the server is gone), the error's kind (http_500, timeout, ...), "no
// output (no tokens)" for an answer without content.
func failure(o subject.Observation, err error) string {
	switch {
	case err != nil && errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case err != nil:
		var k interface{ Kind() string }
		if errors.As(err, &k) {
			return k.Kind()
		}
		return "error"
	case o.Start.IsZero():
		return "no observation"
	case noOutput(o):
		return "no output (no tokens)"
	}
	return ""
}

// giveUp is the calls of a capacity step that end its sending, and the search, when they all
// failed: the step's first giveUp calls without a success (it starts on an idle server, whose
// first requests a working server answers), or giveUp connections refused in a row (the server
// is gone). The search would otherwise read the failures as overload, halve the rate and send
// on, for hours at low rates.
const giveUp = 20

// health counts a capacity step's calls as they end, warm-up ones included, for failing.
type health struct {
	mu      sync.Mutex
	ended   int
	ok      int
	refused int            // connections refused in a row
	kinds   map[string]int // failures by failure's name
	order   []string       // kinds in the order first seen
	first   string         // the first failure's error
	stopped bool           // the step was stopped for giveUp failures
}

// add counts one call that failed for why ("" when it did not) with err, and reports whether the
// step must stop now.
func (h *health) add(why string, err error) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ended++
	if why == "" {
		h.ok++
		h.refused = 0
		return false
	}
	if h.kinds == nil {
		h.kinds = map[string]int{}
	}
	if h.kinds[why] == 0 {
		h.order = append(h.order, why)
	}
	h.kinds[why]++
	if h.first == "" {
		h.first = why
		if err != nil {
			h.first = err.Error()
		}
	}
	if why == "connection refused" {
		h.refused++
	} else {
		h.refused = 0
	}
	if h.ok == 0 && h.ended >= giveUp || h.refused >= giveUp {
		h.stopped = true
	}
	return h.stopped
}

// failing returns the error that ends the search after the step, or nil: the step was stopped
// (add), or at most 1% of its calls succeeded.
func (h *health) failing() *load.ServerFailingError {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended == 0 || !h.stopped && h.ok*100 >= h.ended {
		return nil
	}
	var kinds []string
	for _, k := range h.order {
		kinds = append(kinds, fmt.Sprintf("%s ×%d", k, h.kinds[k]))
	}
	return &load.ServerFailingError{Failed: h.ended - h.ok, Ended: h.ended, Kinds: strings.Join(kinds, ", "), First: h.first, Refused: h.refused >= giveUp}
}

// serverOf is the server a subject talks to, as its description names it ("url"), looking through
// the engine's wrappers; "" when it names none.
func serverOf(s subject.Subject) string {
	for s != nil {
		if d, ok := s.(subject.Describer); ok {
			u, _ := d.Describe()["url"].(string)
			return u
		}
		u, ok := s.(unwrapper)
		if !ok {
			return ""
		}
		s = u.Unwrap()
	}
	return ""
}
