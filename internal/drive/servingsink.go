package drive

import (
	"fmt"
	"maps"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferbench/inferbench/internal/base/unit"
	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// servingSink stands between a serving driver and the engine's sink. It stamps each measured call
// with its schedule lag, counts what the client read together, and measures the client's CPU and
// stalls. The per-request figures (distributions, window, goodput, slices) are the keeper's
// (figures.Figures): its verdicts are read from there.
type servingSink struct {
	next   load.Sink      // a figures.Keeper (keeping)
	keeper figures.Keeper // next
	rep    load.Reporter
	slos   map[string]float64

	// stop, once set, ends an open loop's sending: a capacity step whose verdict is known sends
	// no more (its requests in flight still end and are observed).
	stop atomic.Bool

	mu        sync.Mutex
	asked     int // measured requests that asked for an output length
	short     int // of them, those the server ended before it
	usage     int // measured requests whose server reported usage
	usageBad  int // of them, those whose usage disagreed with what it streamed
	late      int
	dropped   int
	began     time.Time
	cpu0      time.Duration
	steadyEnd time.Time
	steadyN   int
	stalls    *stallWatch
	stallP99  float64 // the stalls' p99 once stopped; NaN when not measured
}

// sampleLimit bounds the raw samples of a servingSink's own distributions (the stalls).
const sampleLimit = 1 << 14

func newServingSink(next load.Sink, c load.Config) *servingSink {
	rep, _ := next.(load.Reporter)
	next = keeping(next, c)
	return &servingSink{next: next, keeper: next.(figures.Keeper), rep: rep, slos: maps.Clone(c.SLO), stallP99: math.NaN()}
}

func (s *servingSink) Begin(p load.Phase) {
	if p == load.Measure {
		s.mu.Lock()
		s.began, s.cpu0 = time.Now(), cpuTime()
		if s.stalls == nil {
			s.stalls = watchStalls()
		}
		s.mu.Unlock()
	}
	s.next.Begin(p)
}

func (s *servingSink) Observe(p load.Phase, o subject.Observation, err error) {
	if p == load.Measure {
		s.measure(&o, err)
	}
	s.next.Observe(p, o, err)
}

// measure stamps a measured call's schedule lag into its values (the keeper adds it) and counts
// the requests that asked for an output length. What the client read together, and the server
// sent together, is the keeper's to count (figures.Coalescing).
func (s *servingSink) measure(o *subject.Observation, err error) {
	if !o.Scheduled.IsZero() && !o.Start.IsZero() {
		if o.Values == nil {
			o.Values = map[string]float64{}
		}
		o.Values["schedule_lag_ms"] = unit.MS(o.Start.Sub(o.Scheduled))
	}
	short, asked := o.Values[figures.ValueOutputShort]
	if asked {
		delete(o.Values, figures.ValueOutputShort)
		s.mu.Lock()
		s.asked++
		if short > 0 {
			s.short++
		}
		s.mu.Unlock()
	}
	if bad, ok := o.Values[figures.ValueUsageMismatch]; ok {
		delete(o.Values, figures.ValueUsageMismatch)
		s.mu.Lock()
		s.usage++
		if bad > 0 {
			s.usageBad++
		}
		s.mu.Unlock()
	}
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.steadyEnd.IsZero() {
		s.steadyN++
	}
}

// markSteadyEnd notes when the load stopped being steady (a closed loop's first worker ran out of
// requests): the steady-state window is from the start of measurement to here.
func (s *servingSink) markSteadyEnd() {
	s.mu.Lock()
	if s.steadyEnd.IsZero() {
		s.steadyEnd = time.Now()
	}
	s.mu.Unlock()
}

func (s *servingSink) countLate()    { s.mu.Lock(); s.late++; s.mu.Unlock() }
func (s *servingSink) countDropped() { s.mu.Lock(); s.dropped++; s.mu.Unlock() }

// startStep makes the keeper's figures begin a sweep step: result reads the step's.
func (s *servingSink) startStep() { s.keeper.WithFigures((*figures.Figures).StartStep) }

// stepResult summarises what a servingSink saw: one sweep step, or a whole scenario.
type stepResult = result.SweepStep

// result reads the keeper's figures of the current window (figures.Figures.Step) and adds the client's
// CPU; it stops the stall watch.
func (s *servingSink) result(name string) stepResult {
	var r stepResult
	s.keeper.WithFigures(func(f *figures.Figures) { r = f.Step(name) })
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.began.IsZero() {
		if wall := time.Since(s.began).Seconds(); wall > 0 {
			r.CPUCores = (cpuTime() - s.cpu0).Seconds() / wall
		}
	}
	if s.stalls != nil {
		s.stallP99 = s.stalls.stop()
		s.stalls = nil
	}
	return r
}

// clientLags are the p99 (and mean) of the client's own delays that a step's result does not
// carry, with the figures they are judged against; NaN where not measured.
type clientLags struct {
	send, sendMean, read, stall float64
	e2eMean, tpotP50            float64
}

// lags reads the client's own delays: before sending, before reading (of the keeper's current
// window), and its event loop's stalls.
func (s *servingSink) lags() clientLags {
	nan := math.NaN()
	l := clientLags{nan, nan, nan, nan, nan, nan}
	s.keeper.WithFigures(func(f *figures.Figures) {
		if x, ok := f.Summary(figures.ValueSendDelay); ok {
			l.send, l.sendMean = x.P99, x.Mean
		}
		if x, ok := f.Summary(figures.ValueReadDelay); ok {
			l.read = x.P99
		}
		if x, ok := f.Summary("e2e_ms"); ok {
			l.e2eMean = x.Mean
		}
		if x, ok := f.Summary("tpot_ms"); ok {
			l.tpotP50 = x.Median
		}
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	l.stall = s.stallP99
	return l
}

// sendShare is the share of a closed loop's request time that the client's send delay may take
// (its mean over the mean e2e) above which the rate is the client's: that share of every slot's
// time passed with no request at the server.
const sendShare = 0.01

// lagReasons says which of the client's own delays moved its figures, judged by what each delay
// can move rather than by its size:
//   - a late read moves a time only by merging events the server sent apart, because reads are
//     stamped by the kernel (package netstamp): the client's share of merged first tokens or gaps
//     above figures.CoalescedWarning (where the server does not say what it sent together: all of them,
//     when the read delay p99 also exceeds the median time per output token);
//   - without kernel stamps every arrival is the read's own time: event-loop stalls p99 above
//     clientBoundLag;
//   - a late send delays the request, not its TTFT (measured from the last byte written): an open
//     loop's send delay p99 above clientBoundLag (the _sched figures include it), a closed loop's
//     mean above sendShare of the mean e2e (its slots sat idle: the rate is the client's).
func (s *servingSink) lagReasons(openLoop bool) []string {
	l := s.lags()
	var why []string
	stamped := !math.IsNaN(l.read)
	first, gaps, said := s.coalesced().Merged()
	whose := "although the server sent them apart"
	if !said {
		whose = "(the server does not say whether it sent them together)"
	}
	if stamped && (said || l.read > l.tpotP50) {
		if first > figures.CoalescedWarning {
			why = append(why, fmt.Sprintf("late reads (read delay p99 %.2f ms) took %.1f%% of first tokens in one read with the next event %s", l.read, 100*first, whose))
		}
		if gaps > figures.CoalescedWarning {
			why = append(why, fmt.Sprintf("late reads (read delay p99 %.2f ms) read %.1f%% of inter-token gaps as zero %s", l.read, 100*gaps, whose))
		}
	}
	if !stamped && l.stall > unit.MS(clientBoundLag) {
		why = append(why, fmt.Sprintf("event-loop stalls p99 %.2f ms exceeds %v, and arrivals are read times (no kernel stamps)", l.stall, clientBoundLag))
	}
	switch {
	case openLoop && l.send > unit.MS(clientBoundLag):
		why = append(why, fmt.Sprintf("send delay p99 %.2f ms exceeds %v", l.send, clientBoundLag))
	case !openLoop && l.e2eMean > 0 && l.sendMean/l.e2eMean > sendShare:
		why = append(why, fmt.Sprintf("send delay mean %.2f ms is %.1f%% of the e2e mean %.2f ms", l.sendMean, 100*l.sendMean/l.e2eMean, l.e2eMean))
	}
	return why
}

// coalesced returns what the requests of the keeper's current window (this sweep step, else the
// whole measured phase) had read together.
func (s *servingSink) coalesced() figures.Coalescing {
	var c figures.Coalescing
	s.keeper.WithFigures(func(f *figures.Figures) { _, c = f.Coalescing() })
	return c
}

// coalescing returns the itl_coalesced_rate and the warnings about events read together that the
// server sent apart.
func (s *servingSink) coalescing() (rate float64, warn []string) {
	c := s.coalesced()
	rate = c.ITLRate()
	first, gaps, said := c.Merged()
	if said {
		serverFirst, serverGaps := c.ServerRates()
		if first > figures.CoalescedWarning {
			warn = append(warn, fmt.Sprintf("ttft: %.1f%% of first tokens arrived in one read with the next although the server sent them apart (the server sent %.1f%% together): "+
				"those TTFTs are when the later one arrived, up to one inter-token gap late (docs/metrics.md, ttft_coalesced_rate)", 100*first, 100*serverFirst))
		}
		if gaps > figures.CoalescedWarning {
			warn = append(warn, fmt.Sprintf("itl: %.1f%% of inter-token gaps are zero because the client read the events together although the server sent them apart (the server sent %.1f%% together): "+
				"each such read shows one long gap and zeros (docs/metrics.md, itl_coalesced_rate)", 100*gaps, 100*serverGaps))
		}
		return rate, warn
	}
	if first > figures.CoalescedWarning {
		warn = append(warn, fmt.Sprintf("ttft: %.1f%% of first tokens arrived in one read with the next and the server does not say whether it sent them together: "+
			"if it sent them apart, those TTFTs are up to one inter-token gap late (docs/metrics.md, ttft_coalesced_rate)", 100*first))
	}
	if gaps > figures.CoalescedWarning {
		warn = append(warn, fmt.Sprintf("itl: %.1f%% of inter-token gaps are zero: the events arrived in one read, and the server does not say whether it sent them together (docs/metrics.md, itl_coalesced_rate)", 100*gaps))
	}
	return rate, warn
}

// report hands the scenario-level figures to the engine's sink when it can take them, and warns
// when the client may have set the pace.
func (s *servingSink) report(r stepResult, openLoop bool) {
	rep := s.rep
	if rep == nil {
		return
	}
	rep.Value("goodput_rps", r.GoodputRPS)
	rep.Value("client_cpu_cores", r.CPUCores)
	s.mu.Lock()
	late, dropped := s.late, s.dropped
	steadyEnd, steadyN, began := s.steadyEnd, s.steadyN, s.began
	s.mu.Unlock()
	if openLoop {
		rep.Value("late_requests", float64(late))
		rep.Value("dropped_requests", float64(dropped))
	}
	if !steadyEnd.IsZero() && steadyEnd.After(began) {
		rep.Value("steady_requests_per_s", float64(steadyN)/steadyEnd.Sub(began).Seconds())
		rep.Extra(result.SectionSteadyWindow, &result.SteadyWindow{Start: began, End: steadyEnd, Requests: steadyN})
	}
	if r.SLOsHold != nil {
		rep.Extra(result.SectionSLO, &result.SLO{Hold: *r.SLOsHold, Failures: r.SLOFailures, Objectives: s.slos})
	}
	var sl []result.SliceStat
	s.keeper.WithFigures(func(f *figures.Figures) { sl = f.Slices() })
	if len(sl) > 1 {
		rep.Extra(result.SectionSlices, sl)
	}
	s.mu.Lock()
	asked, short := s.asked, s.short
	s.mu.Unlock()
	if asked > 0 {
		r := float64(short) / float64(asked)
		rep.Value("output_short_rate", r)
		if r > shortWarning {
			rep.Warn(fmt.Sprintf("output_short_rate: %.1f%% of requests (%d of %d) stopped before the output tokens they asked for: "+
				"output lengths, throughput and per-token figures are not the workload's; ask for exact lengths (ignore_eos: true, --ignore-eos) where the server takes it (vLLM, SGLang, llama.cpp)", 100*r, short, asked))
		}
	}
	s.reportUsage(rep)
	rate, warn := s.coalescing()
	if !math.IsNaN(rate) {
		rep.Value("itl_coalesced_rate", rate)
	}
	for _, w := range warn {
		rep.Warn(w)
	}
	if stall := s.lags().stall; !math.IsNaN(stall) {
		rep.Value("client_stall_p99_ms", stall)
	}
	if why := append(clientBound(r, openLoop), s.lagReasons(openLoop)...); len(why) > 0 {
		rep.Extra(result.SectionClientBound, true)
		rep.Warn("client_bound: " + strings.Join(why, "; ") + ": figures may show the client's limits, not the server's")
	}
}

// clientBound says why a step's figures may be the client's rather than the server's: an open
// loop's schedule lag p99 above clientBoundLag, or the client using over 90% of its CPUs.
func clientBound(r stepResult, openLoop bool) []string {
	var why []string
	if openLoop && r.LagP99 > unit.MS(clientBoundLag) {
		why = append(why, fmt.Sprintf("schedule lag p99 %.2f ms exceeds %v", r.LagP99, clientBoundLag))
	}
	if procs := runtime.GOMAXPROCS(0); r.CPUCores > 0.9*float64(procs) {
		why = append(why, fmt.Sprintf("the client used %.2f of its %d CPUs", r.CPUCores, procs))
	}
	return why
}

// reportUsage reports the share of requests whose server's usage disagreed with what it streamed
// (usage_mismatch_rate), and warns when some did.
func (s *servingSink) reportUsage(rep load.Reporter) {
	s.mu.Lock()
	n, bad := s.usage, s.usageBad
	s.mu.Unlock()
	if n == 0 {
		return
	}
	r := float64(bad) / float64(n)
	rep.Value("usage_mismatch_rate", r)
	if bad > 0 {
		rep.Warn(fmt.Sprintf("usage_mismatch_rate: %.1f%% of requests (%d of %d) had usage.completion_tokens below the content events streamed or above max_tokens: "+
			"output_tokens, throughput and per-token figures use the server's counts (docs/certificate.md, usage)", 100*r, bad, n))
	}
}
