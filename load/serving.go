package load

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/subject"
)

// Serving modes.
const (
	ModeConcurrency = "concurrency" // closed loop: Concurrency requests in flight
	ModeRate        = "rate"        // open loop: requests sent on a seeded arrival schedule
	ModeSweep       = "sweep"       // synchronous, maximum throughput, then rates between
	ModeOffline     = "offline"     // every request at once, up to MaxConcurrency in flight
)

func init() {
	RegisterDriver(ModeConcurrency, ClosedLoop)
	RegisterDriver(ModeRate, OpenLoop)
	RegisterDriver(ModeSweep, Sweep)
	RegisterDriver(ModeOffline, Offline)
}

// SweepConfig configures mode sweep. Every step sends measurement_iterations requests (or runs
// for duration).
type SweepConfig struct {
	// Steps is the number of rates tried between the synchronous and the maximum rate (default 4).
	Steps int `yaml:"steps" json:"steps,omitempty"`
	// Search, with SLOs, bisects between those rates this many times for the highest rate whose
	// SLOs hold (default 0: no search).
	Search int `yaml:"search" json:"search,omitempty"`
}

// ClientBoundLag is the p99 of the client's own lags (an open loop's schedule lag, the delay
// before a request's bytes left, the delay before arrived bytes were read, the stalls of its
// event loop) above which a scenario is client_bound: the client, not the server, set the pace
// or the timing.
const ClientBoundLag = time.Millisecond

// Tainted are the metrics a client_bound scenario marks with TaintNote: the figures the client's
// own limits may have set.
var Tainted = []string{"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "ttft_sched_ms", "e2e_sched_ms", "latency_ms",
	"requests_per_s", "output_tokens_per_s", "throughput_ips", "iterations_per_s", "goodput_rps", "steady_requests_per_s"}

// TaintNote is the note of a Tainted metric in a client_bound scenario.
const TaintNote = "client_bound: the client's own limits may have set this figure (see the scenario's warnings)"

// CoalescedWarning is the fraction of first tokens (or of inter-token gaps) that the client read
// together with the next event although the server sent them apart (or, when the server does not
// say, at all) above which the scenario is warned.
const CoalescedWarning = 0.01

// Per-request values a subject may report (subject.Observation.Values) about the client's own
// delays and, where the server says, what the server sent together. The delays become metrics of
// the scenario; the server's figures are read here and removed.
const (
	// ValueSendDelay is the time from the call to the request's last byte leaving, in ms.
	ValueSendDelay = "send_delay_ms"
	// ValueReadDelay is the longest time from the kernel receiving response bytes to the
	// client reading them, in ms.
	ValueReadDelay = "read_delay_ms"
	// ValueServerTogether is the number of content events the server wrote in one write with
	// the event before them.
	ValueServerTogether = "server_events_together"
	// ValueServerFirstTogether is 1 when the server wrote the first two content events in one
	// write, else 0.
	ValueServerFirstTogether = "server_first_together"
)

func init() {
	result.Define(
		result.Info{Name: "itl_coalesced_rate", Unit: "ratio", Better: result.Lower, Doc: "inter-token gaps of zero because the two events arrived in one read, over all inter-token gaps"},
		result.Info{Name: "client_stall_p99_ms", Unit: "ms", Better: result.Lower, Doc: "p99 of how late the client's event loop woke from a 5 ms sleep during the measured phase"},
		// Read by the serving loads and removed; a single-call load keeps them as metrics.
		result.Info{Name: ValueServerFirstTogether, Unit: "ratio", Better: result.Lower, Doc: "mockserver: 1 when the server wrote a request's first two content events in one write, else 0 (its mean is the server's share)"},
		result.Info{Name: ValueServerTogether, Unit: "events", Better: result.Lower, Doc: "mockserver: content events of a request the server wrote in one write with the event before them"},
	)
}

// DefaultOfflineConcurrency caps the requests in flight in mode offline.
const DefaultOfflineConcurrency = 1024

// Reporter is an optional ability of a Sink: serving drivers report figures about the load itself
// (goodput, schedule lag, the client's CPU, sweep steps) that no single call carries.
type Reporter interface {
	// Value records a scenario-level metric, such as "goodput_rps".
	Value(name string, v float64)
	// Extra records a section of the scenario's result by its name in run.json, such as
	// result.SectionSweep with []result.SweepStep (result.Extra.Set takes it).
	Extra(section string, v any)
	// Warn adds a warning to the scenario.
	Warn(msg string)
}

func (c Config) validateServing() error {
	switch c.Arrival {
	case "", "poisson", "constant", "gamma":
	default:
		return fmt.Errorf("arrival %q: want poisson, constant or gamma", c.Arrival)
	}
	switch c.Overflow {
	case "", "wait", "drop":
	default:
		return fmt.Errorf("overflow %q: want wait or drop", c.Overflow)
	}
	if c.Concurrency < 0 || c.MaxConcurrency < 0 || c.Rate < 0 || c.Burstiness < 0 || c.Duration < 0 || c.WarmupTime < 0 || c.RampUp < 0 {
		return fmt.Errorf("concurrency, max_concurrency, rate, burstiness, duration, warmup_time and ramp_up must not be negative")
	}
	if c.Arrival == "gamma" && c.Burstiness == 0 {
		return fmt.Errorf("arrival gamma needs burstiness (the shape: 1 is poisson, below 1 burstier)")
	}
	if c.Sweep != nil && (c.Sweep.Steps < 0 || c.Sweep.Search < 0) {
		return fmt.Errorf("sweep steps and search must not be negative")
	}
	if c.Speedup < 0 || c.Speedup != c.Speedup {
		return fmt.Errorf("speedup %v: want a factor above 0 (mode trace)", c.Speedup)
	}
	if c.RateRamp != nil {
		if c.mode() != ModeRate {
			return fmt.Errorf("rate_ramp is for mode rate, not %s", c.mode())
		}
		if err := c.RateRamp.Validate(); err != nil {
			return err
		}
	}
	if _, err := ParseSLOs(c.SLO); err != nil {
		return err
	}
	return nil
}

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
		if limit <= 0 || math.IsNaN(limit) {
			return nil, fmt.Errorf("slo %q: limit %v must be above 0", key, limit)
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

func msOf(d time.Duration) float64 { return float64(d) / 1e6 }

// StreamMetrics passes the per-request generation metrics of a streamed observation to f, as
// docs/metrics.md ("Streaming") defines them, and returns its output tokens: the subject's figure,
// else the tokens its content events carried. ok is false when the call streamed no token. The
// engine's distributions and a serving load's SLO checks both take them from here.
func StreamMetrics(o subject.Observation, f func(metric string, v float64)) (out int, ok bool) {
	if o.FirstToken.IsZero() || o.Start.IsZero() {
		return 0, false
	}
	f("ttft_ms", msOf(o.FirstToken.Sub(o.Start)))
	f("e2e_ms", msOf(o.End.Sub(o.Start)))
	if !o.Scheduled.IsZero() && !o.Scheduled.Equal(o.Start) {
		f("ttft_sched_ms", msOf(o.FirstToken.Sub(o.Scheduled)))
		f("e2e_sched_ms", msOf(o.End.Sub(o.Scheduled)))
	}
	itl(o.Tokens, f)
	out = o.OutputTokens
	if out == 0 {
		for _, t := range o.Tokens {
			out += max(t.Tokens, 1)
		}
	}
	if out > 1 {
		f("tpot_ms", msOf(o.End.Sub(o.FirstToken))/float64(out-1))
	}
	return out, true
}

// itl passes the inter-token latencies of one request to f, as the events arrived: the gap before
// each content event, spread over the tokens it carries (the server put them in one event). Events
// that came in one read of the socket arrived together: the first has the whole gap since the
// previous read and the others a gap of zero, which is what the client saw. The client cannot
// tell when, within that gap, the server sent each of them; itl_coalesced_rate says how many gaps
// are of this kind, and the scenario is warned when the server sent them apart (servingSink).
//
// Note: these gaps used to be spread evenly over the events of one read. That made a plausible
// number that neither the client nor the server saw, and hid the server's bursts: at 512 streams
// on 2 cores ITL p99 read 2.6-3.2 ms low.
func itl(events []subject.TokenEvent, f func(metric string, v float64)) {
	for i := 1; i < len(events); i++ {
		n := max(events[i].Tokens, 1)
		gap := msOf(events[i].At.Sub(events[i-1].At)) / float64(n)
		for range n {
			f("itl_ms", gap)
		}
	}
}

// Together counts the content events of one request that arrived in one read with the event
// before them (the same arrival time), and whether the first two did.
func Together(events []subject.TokenEvent) (gaps, together int, first bool) {
	for i := 1; i < len(events); i++ {
		if events[i].At.Equal(events[i-1].At) {
			together++
		}
	}
	return max(len(events)-1, 0), together, len(events) > 1 && events[1].At.Equal(events[0].At)
}

// servingSink stands between a serving driver and the engine's sink. It stamps each measured call
// with its schedule lag, judges it against the SLOs for goodput, keeps compact distributions of
// the serving metrics for SLO checks and sweep steps, and measures the client's CPU.
type servingSink struct {
	next Sink
	slos []SLO

	mu        sync.Mutex
	dists     map[string]*stats.Dist // compact: percentiles from a histogram past sampleLimit
	measured  int
	failed    int
	good      int
	late      int
	dropped   int
	winStart  time.Time
	winEnd    time.Time
	began     time.Time
	cpu0      time.Duration
	steadyEnd time.Time
	steadyN   int
	stalls    *stallWatch
	turns     []turnDists // mode sessions: by turn
	sliceLen  time.Duration
	slices    []*slice // time slices of the measured phase (slices.go)
	stallP99  float64  // the stalls' p99 once stopped; NaN when not measured
	// Coalescing: streamed requests, those whose first two content events came in one read, and
	// those of them the server sent apart (known for serverSaid requests); the same for gaps.
	streamed, firstTogether, firstExcess, serverSaid, serverFirst int
	gaps, gapsTogether, gapsExcess, serverGaps                    int
}

// sampleLimit bounds the raw samples of servingSink's own distributions (its figures are
// percentiles for SLO checks; the engine keeps the full distributions).
const sampleLimit = 1 << 14

func newServingSink(next Sink, c Config) *servingSink {
	slos, _ := ParseSLOs(c.SLO) // validated with the config
	sliceLen := c.Slice
	if sliceLen == 0 {
		sliceLen = DefaultSlice
	}
	return &servingSink{next: next, slos: slos, dists: map[string]*stats.Dist{}, stallP99: math.NaN(), sliceLen: sliceLen}
}

func (s *servingSink) Begin(p Phase) {
	if p == Measure {
		s.mu.Lock()
		s.began, s.cpu0 = time.Now(), cpuTime()
		if s.stalls == nil {
			s.stalls = watchStalls()
		}
		s.mu.Unlock()
	}
	s.next.Begin(p)
}

func (s *servingSink) Observe(p Phase, o subject.Observation, err error) {
	if p == Measure {
		s.measure(&o, err)
	}
	s.next.Observe(p, o, err)
}

func (s *servingSink) measure(o *subject.Observation, err error) {
	// What needs no lock first: the sink is shared by every worker.
	var gaps, together int
	var first bool
	if err == nil && !o.FirstToken.IsZero() {
		gaps, together, first = Together(o.Tokens)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.measured++
	if !o.Scheduled.IsZero() && !o.Start.IsZero() {
		lag := msOf(o.Start.Sub(o.Scheduled))
		s.add("schedule_lag_ms", lag)
		if o.Values == nil {
			o.Values = map[string]float64{}
		}
		o.Values["schedule_lag_ms"] = lag
	}
	serverFirst, firstSaid := o.Values[ValueServerFirstTogether]
	serverTogether := o.Values[ValueServerTogether]
	if firstSaid {
		delete(o.Values, ValueServerFirstTogether)
		delete(o.Values, ValueServerTogether)
	}
	for _, k := range [...]string{ValueSendDelay, ValueReadDelay} {
		if v, ok := o.Values[k]; ok {
			s.add(k, v)
		}
	}
	sl := s.sliceOf(o, err != nil)
	if err != nil {
		s.failed++
		return
	}
	if !o.FirstToken.IsZero() {
		s.streamed++
		s.gaps += gaps
		s.gapsTogether += together
		if first {
			s.firstTogether++
		}
		if firstSaid {
			s.serverSaid++
			s.serverGaps += int(serverTogether)
			if serverFirst > 0 {
				s.serverFirst++
			} else if first {
				s.firstExcess++
			}
			s.gapsExcess += max(together-int(serverTogether), 0)
		}
	}
	if s.winStart.IsZero() || o.Start.Before(s.winStart) {
		s.winStart = o.Start
	}
	if o.End.After(s.winEnd) {
		s.winEnd = o.End
	}
	if s.steadyEnd.IsZero() {
		s.steadyN++
	}
	missed := false
	_, streamed := StreamMetrics(*o, func(m string, v float64) {
		s.add(m, v)
		if sl != nil && m != "itl_ms" {
			sl.add(m, v)
		}
		for _, slo := range s.slos {
			if slo.Metric == m && v > slo.Limit {
				missed = true
			}
		}
	})
	if missed || (!streamed && len(s.slos) > 0) {
		return // a request without tokens cannot meet an SLO on tokens
	}
	s.good++
}

func (s *servingSink) add(name string, v float64) {
	d, ok := s.dists[name]
	if !ok {
		d = stats.NewDist(sampleLimit)
		s.dists[name] = d
	}
	d.Add(v)
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

// stepResult summarises what a servingSink saw: one sweep step, or a whole scenario.
type stepResult = result.SweepStep

func (s *servingSink) result(name string) stepResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := stepResult{Name: name, Requests: s.measured, Failed: s.failed, Stats: map[string]float64{}}
	if win := s.winEnd.Sub(s.winStart).Seconds(); win > 0 {
		r.RPS = float64(s.measured-s.failed) / win
		r.GoodputRPS = float64(s.good) / win
	}
	sum := func(m string) (stats.Summary, bool) {
		d, ok := s.dists[m]
		if !ok {
			return stats.Summary{}, false
		}
		x, err := d.Summary()
		return x, err == nil
	}
	for _, m := range []string{"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"} {
		if x, ok := sum(m); ok {
			r.Stats[m+".p50"], r.Stats[m+".p99"] = x.Median, x.P99
		}
	}
	if x, ok := sum("schedule_lag_ms"); ok {
		r.LagP99 = x.P99
	}
	if len(s.slos) > 0 {
		hold := s.failed == 0
		for _, slo := range s.slos {
			x, ok := sum(slo.Metric)
			v, _ := statOf(x, slo.Stat)
			if !ok || v > slo.Limit {
				hold = false
				r.SLOFailures = append(r.SLOFailures, fmt.Sprintf("%s = %s > %s", slo.Key, fmtF(v), fmtF(slo.Limit)))
			}
		}
		if s.failed > 0 {
			r.SLOFailures = append(r.SLOFailures, fmt.Sprintf("%d failed requests", s.failed))
		}
		r.SLOsHold = &hold
	}
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

// lags returns the p99 of the client's own delays that a step's result does not carry: before
// sending, before reading, and its event loop's stalls (NaN when not measured).
func (s *servingSink) lags() (send, read, stall float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p99 := func(m string) float64 {
		if d, ok := s.dists[m]; ok {
			if x, err := d.Summary(); err == nil {
				return x.P99
			}
		}
		return math.NaN()
	}
	return p99(ValueSendDelay), p99(ValueReadDelay), s.stallP99
}

// lagReasons says which of the client's own delays exceeded ClientBoundLag at p99.
func (s *servingSink) lagReasons() []string {
	send, read, stall := s.lags()
	var why []string
	for _, l := range []struct {
		what string
		p99  float64
	}{{"send delay", send}, {"read delay", read}, {"event-loop stalls", stall}} {
		if l.p99 > msOf(ClientBoundLag) {
			why = append(why, fmt.Sprintf("%s p99 %.2f ms exceeds %v", l.what, l.p99, ClientBoundLag))
		}
	}
	return why
}

// coalescing returns the itl_coalesced_rate and the warnings about events read together that the
// server sent apart.
func (s *servingSink) coalescing() (rate float64, warn []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rate = math.NaN()
	if s.gaps > 0 {
		rate = float64(s.gapsTogether) / float64(s.gaps)
	}
	if s.streamed == 0 {
		return rate, nil
	}
	pct := func(n, of int) float64 { return 100 * float64(n) / float64(of) }
	if s.serverSaid == s.streamed {
		if f := float64(s.firstExcess) / float64(s.streamed); f > CoalescedWarning {
			warn = append(warn, fmt.Sprintf("ttft: %.1f%% of first tokens arrived in one read with the next although the server sent them apart (the server sent %.1f%% together): "+
				"those TTFTs are when the later one arrived, up to one inter-token gap late (docs/metrics.md, ttft_coalesced_rate)", pct(s.firstExcess, s.streamed), pct(s.serverFirst, s.streamed)))
		}
		if s.gaps > 0 && float64(s.gapsExcess)/float64(s.gaps) > CoalescedWarning {
			warn = append(warn, fmt.Sprintf("itl: %.1f%% of inter-token gaps are zero because the client read the events together although the server sent them apart (the server sent %.1f%% together): "+
				"each such read shows one long gap and zeros (docs/metrics.md, itl_coalesced_rate)", pct(s.gapsExcess, s.gaps), pct(s.serverGaps, s.gaps)))
		}
		return rate, warn
	}
	if f := float64(s.firstTogether) / float64(s.streamed); f > CoalescedWarning {
		warn = append(warn, fmt.Sprintf("ttft: %.1f%% of first tokens arrived in one read with the next and the server does not say whether it sent them together: "+
			"if it sent them apart, those TTFTs are up to one inter-token gap late (docs/metrics.md, ttft_coalesced_rate)", pct(s.firstTogether, s.streamed)))
	}
	if s.gaps > 0 && float64(s.gapsTogether)/float64(s.gaps) > CoalescedWarning {
		warn = append(warn, fmt.Sprintf("itl: %.1f%% of inter-token gaps are zero: the events arrived in one read, and the server does not say whether it sent them together (docs/metrics.md, itl_coalesced_rate)", pct(s.gapsTogether, s.gaps)))
	}
	return rate, warn
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// report hands the scenario-level figures to the engine's sink when it can take them, and warns
// when the client may have set the pace.
func (s *servingSink) report(r stepResult, openLoop bool) {
	rep, ok := s.next.(Reporter)
	if !ok {
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
		rep.Extra(result.SectionSLO, &result.SLO{Hold: *r.SLOsHold, Failures: r.SLOFailures, Objectives: sloMap(s.slos)})
	}
	if sl := s.sliceStats(); len(sl) > 1 {
		rep.Extra(SectionSlices, sl)
	}
	rate, warn := s.coalescing()
	if !math.IsNaN(rate) {
		rep.Value("itl_coalesced_rate", rate)
	}
	for _, w := range warn {
		rep.Warn(w)
	}
	if _, _, stall := s.lags(); !math.IsNaN(stall) {
		rep.Value("client_stall_p99_ms", stall)
	}
	if why := append(clientBound(r, openLoop), s.lagReasons()...); len(why) > 0 {
		rep.Extra(result.SectionClientBound, true)
		rep.Warn("client_bound: " + strings.Join(why, "; ") + ": figures may show the client's limits, not the server's")
	}
}

// stallTick is the sleep of the stall watch: how late it wakes is how long the client's goroutines
// wait for a CPU (the event loop's stalls).
const stallTick = 5 * time.Millisecond

// stallWatch measures the client's event-loop stalls while a measured phase runs.
type stallWatch struct {
	quit chan struct{}
	done chan float64
}

func watchStalls() *stallWatch {
	w := &stallWatch{quit: make(chan struct{}), done: make(chan float64, 1)}
	go func() {
		d := stats.NewDist(sampleLimit)
		t := time.NewTimer(stallTick)
		defer t.Stop()
		for {
			due := time.Now().Add(stallTick)
			select {
			case <-w.quit:
				p99 := math.NaN()
				if x, err := d.Summary(); err == nil {
					p99 = x.P99
				}
				w.done <- p99
				return
			case <-t.C: // the channel's time leaves out the wait for a CPU: time.Since does not
				d.Add(max(msOf(time.Since(due)), 0))
				t.Reset(stallTick)
			}
		}
	}()
	return w
}

// stop ends the watch and returns the p99 of its wake-up delays in ms (NaN without any).
func (w *stallWatch) stop() float64 {
	close(w.quit)
	return <-w.done
}

// clientBound says why a step's figures may be the client's rather than the server's: an open
// loop's schedule lag p99 above ClientBoundLag, or the client using over 90% of its CPUs.
func clientBound(r stepResult, openLoop bool) []string {
	var why []string
	if openLoop && r.LagP99 > msOf(ClientBoundLag) {
		why = append(why, fmt.Sprintf("schedule lag p99 %.2f ms exceeds %v", r.LagP99, ClientBoundLag))
	}
	if procs := runtime.GOMAXPROCS(0); r.CPUCores > 0.9*float64(procs) {
		why = append(why, fmt.Sprintf("the client used %.2f of its %d CPUs", r.CPUCores, procs))
	}
	return why
}

func sloMap(slos []SLO) map[string]float64 {
	m := map[string]float64{}
	for _, s := range slos {
		m[s.Key] = s.Limit
	}
	return m
}

// WithParams returns c with the load settings a scenario's parameters name: "concurrency",
// "rate" and "max_concurrency". A matrix axis over them sweeps the load, one scenario per value:
// matrix: {concurrency: [1, 8, 64]}.
func (c Config) WithParams(p map[string]any) Config {
	num := func(key string) (float64, bool) {
		switch v := p[key].(type) {
		case int:
			return float64(v), true
		case int64:
			return float64(v), true
		case uint64:
			return float64(v), true
		case float64:
			return v, true
		}
		return 0, false
	}
	if v, ok := num("concurrency"); ok {
		c.Concurrency = int(v)
	}
	if v, ok := num("rate"); ok {
		c.Rate = v
	}
	if v, ok := num("max_concurrency"); ok {
		c.MaxConcurrency = int(v)
	}
	return c
}
