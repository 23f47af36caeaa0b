package drive

import (
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// streamer is a fake streaming subject: each call waits ttft (chosen by index), then emits tokens
// events gap apart.
type streamer struct {
	ttft     func(i int) time.Duration
	gap      time.Duration
	tokens   int
	fail     func(i int) error
	inFlight atomic.Int64
	peak     atomic.Int64
	calls    atomic.Int64
}

func (s *streamer) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	s.calls.Add(1)
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			break
		}
	}
	o := subject.Observation{Scheduled: r.Scheduled, Start: time.Now()}
	if s.fail != nil {
		if err := s.fail(r.Index); err != nil {
			o.End = time.Now()
			return o, err
		}
	}
	ttft := time.Millisecond
	if s.ttft != nil {
		ttft = s.ttft(r.Index)
	}
	time.Sleep(ttft)
	for k := range max(s.tokens, 1) {
		if k > 0 && s.gap > 0 {
			time.Sleep(s.gap)
		}
		o.Tokens = append(o.Tokens, subject.TokenEvent{At: time.Now(), Tokens: 1})
	}
	o.FirstToken, o.End = o.Tokens[0].At, time.Now()
	o.OutputTokens = len(o.Tokens)
	return o, nil
}

func (s *streamer) Close() error { return nil }

// recorder is a Sink and Reporter that keeps everything.
type recorder struct {
	mu       sync.Mutex
	phases   []load.Phase
	obs      map[load.Phase][]subject.Observation
	errs     int
	values   map[string]float64
	extra    map[string]any
	warnings []string
}

func newRecorder() *recorder {
	return &recorder{obs: map[load.Phase][]subject.Observation{}, values: map[string]float64{}, extra: map[string]any{}}
}

func (r *recorder) Begin(p load.Phase) { r.mu.Lock(); r.phases = append(r.phases, p); r.mu.Unlock() }
func (r *recorder) Observe(p load.Phase, o subject.Observation, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.obs[p] = append(r.obs[p], o)
	if err != nil {
		r.errs++
	}
}
func (r *recorder) Value(name string, v float64) { r.mu.Lock(); r.values[name] = v; r.mu.Unlock() }
func (r *recorder) Extra(s string, v any)        { r.mu.Lock(); r.extra[s] = v; r.mu.Unlock() }
func (r *recorder) Warn(msg string)              { r.mu.Lock(); r.warnings = append(r.warnings, msg); r.mu.Unlock() }

func ptr(n int) *int { return &n }

func TestSchedule(t *testing.T) {
	tests := []struct {
		name    string
		c       load.Config
		rate    float64
		n, warm int
		cv      float64 // coefficient of variation of the gaps
	}{
		// Constant: exact gaps.
		{"constant", load.Config{Arrival: "constant", WarmupIterations: ptr(2), MeasurementIterations: ptr(1000)}, 100, 1002, 2, 0},
		// Poisson: exponential gaps, CV 1.
		{"poisson", load.Config{Seed: 1, WarmupIterations: ptr(0), MeasurementIterations: ptr(100000)}, 2000, 100000, 0, 1},
		// Gamma with shape 0.25: CV 2.
		{"gamma bursty", load.Config{Seed: 2, Arrival: "gamma", Burstiness: 0.25, WarmupIterations: ptr(0), MeasurementIterations: ptr(100000)}, 50, 100000, 0, 2},
		// Gamma with shape 4: CV 0.5.
		{"gamma smooth", load.Config{Seed: 3, Arrival: "gamma", Burstiness: 4, WarmupIterations: ptr(0), MeasurementIterations: ptr(100000)}, 50, 100000, 0, 0.5},
		// Time bounds: 1 s of warm-up then 10 s measured at 100/s.
		{"durations", load.Config{Arrival: "constant", WarmupTime: time.Second, Duration: 10 * time.Second}, 100, 1100, 100, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			off, warm := sendOffsets(tt.c, tt.rate)
			if len(off) != tt.n || warm != tt.warm {
				t.Fatalf("%d offsets (%d warm-up), want %d (%d)", len(off), warm, tt.n, tt.warm)
			}
			var sum, sum2 float64
			for i := 1; i < len(off); i++ {
				g := (off[i] - off[i-1]).Seconds()
				if g < 0 {
					t.Fatalf("offset %d goes back in time", i)
				}
				sum += g
				sum2 += g * g
			}
			n := float64(len(off) - 1)
			mean := sum / n
			cv := math.Sqrt(max(sum2/n-mean*mean, 0)) / mean
			if math.Abs(mean*tt.rate-1) > 0.02 {
				t.Errorf("mean gap %v s, want %v", mean, 1/tt.rate)
			}
			if math.Abs(cv-tt.cv) > 0.05*tt.cv+1e-6 {
				t.Errorf("gap CV %.3f, want %.3f", cv, tt.cv)
			}
			again, _ := sendOffsets(tt.c, tt.rate)
			for i := range off {
				if off[i] != again[i] {
					t.Fatal("same seed, different schedule")
				}
			}
		})
	}
	// A duration gives exactly rate × duration measured requests within it, whatever the seed.
	for seed := uint64(1); seed <= 3; seed++ {
		off, warm := sendOffsets(load.Config{Seed: seed, WarmupIterations: ptr(5), Duration: 30 * time.Second}, 2000)
		if n := len(off) - warm; n != 60000 {
			t.Errorf("seed %d: %d measured requests in 30 s at 2000/s, want 60000", seed, n)
		}
		if span := off[len(off)-1] - off[warm]; span > 30*time.Second || span < 29*time.Second {
			t.Errorf("seed %d: measured requests span %v, want just under 30 s", seed, span)
		}
	}
	a, _ := sendOffsets(load.Config{Seed: 1, MeasurementIterations: ptr(10)}, 10)
	b, _ := sendOffsets(load.Config{Seed: 2, MeasurementIterations: ptr(10)}, 10)
	if a[5] == b[5] {
		t.Error("different seeds, same schedule")
	}
}

func TestClosedLoop(t *testing.T) {
	s := &streamer{tokens: 3, gap: time.Millisecond}
	rec := newRecorder()
	c := load.Config{Mode: load.ModeConcurrency, Concurrency: 8, WarmupIterations: ptr(8), MeasurementIterations: ptr(200)}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := driveClosedLoop(context.Background(), s, c, rec); err != nil {
		t.Fatal(err)
	}
	if got := s.peak.Load(); got != 8 {
		t.Errorf("peak concurrency %d, want 8", got)
	}
	if len(rec.obs[load.Warmup]) != 8 || len(rec.obs[load.Measure]) != 200 || s.calls.Load() != 208 {
		t.Errorf("%d warm-up, %d measured, %d calls", len(rec.obs[load.Warmup]), len(rec.obs[load.Measure]), s.calls.Load())
	}
	if len(rec.phases) != 2 || rec.phases[0] != load.Warmup || rec.phases[1] != load.Measure {
		t.Errorf("phases %v", rec.phases)
	}
	if rec.values["steady_requests_per_s"] <= 0 || rec.extra["steady_window"] == nil {
		t.Errorf("no steady-state window: %v", rec.values)
	}
	if _, ok := rec.values["goodput_rps"]; !ok {
		t.Errorf("no goodput: %v", rec.values)
	}
}

// TestClosedLoopNoDrain checks that measurement starts while warm-up requests are still in
// flight: the loop does not empty between the phases.
func TestClosedLoopNoDrain(t *testing.T) {
	// Warm-up requests take 50 ms or 5 ms by index, so some are still running when the eighth is
	// handed out and measurement begins.
	s := &streamer{ttft: func(i int) time.Duration {
		if i%2 == 0 {
			return 50 * time.Millisecond
		}
		return 5 * time.Millisecond
	}}
	rec := newRecorder()
	c := load.Config{Mode: load.ModeConcurrency, Concurrency: 4, WarmupIterations: ptr(8), MeasurementIterations: ptr(40)}
	if err := driveClosedLoop(context.Background(), s, c, rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.obs[load.Warmup]) != 8 || len(rec.obs[load.Measure]) != 40 {
		t.Fatalf("%d warm-up, %d measured", len(rec.obs[load.Warmup]), len(rec.obs[load.Measure]))
	}
	lastWarmEnd, firstMeasured := time.Time{}, time.Time{}
	for _, o := range rec.obs[load.Warmup] {
		if o.End.After(lastWarmEnd) {
			lastWarmEnd = o.End
		}
	}
	for _, o := range rec.obs[load.Measure] {
		if firstMeasured.IsZero() || o.Start.Before(firstMeasured) {
			firstMeasured = o.Start
		}
	}
	if !firstMeasured.Before(lastWarmEnd) {
		t.Errorf("first measured request sent %v after the last warm-up request ended: the loop drained", firstMeasured.Sub(lastWarmEnd))
	}
	if got := s.peak.Load(); got != 4 {
		t.Errorf("peak concurrency %d, want 4", got)
	}
}

// TestClosedLoopRampUp checks that ramp_up spreads the workers' first requests.
func TestClosedLoopRampUp(t *testing.T) {
	s := &streamer{ttft: func(int) time.Duration { return 400 * time.Millisecond }}
	rec := newRecorder()
	c := load.Config{Mode: load.ModeConcurrency, Concurrency: 4, RampUp: 200 * time.Millisecond, WarmupIterations: ptr(0), MeasurementIterations: ptr(4)}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := driveClosedLoop(context.Background(), s, c, rec); err != nil {
		t.Fatal(err)
	}
	var starts []time.Time
	for _, o := range rec.obs[load.Measure] {
		starts = append(starts, o.Start)
	}
	slices.SortFunc(starts, time.Time.Compare)
	if len(starts) != 4 {
		t.Fatalf("%d requests", len(starts))
	}
	// Workers start 0, 50, 100 and 150 ms late.
	for k := 1; k < 4; k++ {
		if d := starts[k].Sub(starts[0]); d < time.Duration(k)*50*time.Millisecond-5*time.Millisecond {
			t.Errorf("worker %d started %v after the first, want about %v", k, d, time.Duration(k)*50*time.Millisecond)
		}
	}
	if err := (load.Config{Mode: load.ModeConcurrency, RampUp: -time.Second}).Validate(); err == nil || !strings.Contains(err.Error(), "ramp_up") {
		t.Errorf("negative ramp_up: %v", err)
	}
}

type fatalErr struct{}

func (fatalErr) Error() string { return "process died" }
func (fatalErr) Fatal() bool   { return true }

func TestClosedLoopFatal(t *testing.T) {
	s := &streamer{fail: func(i int) error {
		if i == 20 {
			return fatalErr{}
		}
		return nil
	}}
	err := driveClosedLoop(context.Background(), s, load.Config{Concurrency: 4, WarmupIterations: ptr(0), MeasurementIterations: ptr(100000)}, newRecorder())
	if !errors.As(err, new(fatalErr)) {
		t.Fatalf("err = %v, want the fatal error", err)
	}
	if n := s.calls.Load(); n > 100 {
		t.Errorf("%d calls after a fatal error", n)
	}
}

func TestOpenLoop(t *testing.T) {
	s := &streamer{tokens: 2}
	rec := newRecorder()
	c := load.Config{Mode: load.ModeRate, Rate: 500, Arrival: "constant", WarmupIterations: ptr(5), MeasurementIterations: ptr(200)}
	start := time.Now()
	if err := driveOpenLoop(context.Background(), s, c, rec); err != nil {
		t.Fatal(err)
	}
	// 205 requests 2 ms apart: about 0.41 s, however fast the subject is.
	if d := time.Since(start); d < 400*time.Millisecond {
		t.Errorf("took %v, want the schedule's 0.41 s", d)
	}
	if len(rec.obs[load.Warmup]) != 5 || len(rec.obs[load.Measure]) != 200 {
		t.Fatalf("%d warm-up, %d measured", len(rec.obs[load.Warmup]), len(rec.obs[load.Measure]))
	}
	for _, o := range rec.obs[load.Measure] {
		if o.Scheduled.IsZero() || o.Start.Before(o.Scheduled) {
			t.Fatalf("sent %v before scheduled %v", o.Start, o.Scheduled)
		}
		if _, ok := o.Values["schedule_lag_ms"]; !ok {
			t.Fatal("no schedule lag on a measured call")
		}
	}
	if rec.values["late_requests"] != 0 || rec.values["dropped_requests"] != 0 {
		t.Errorf("late/dropped without a cap: %v", rec.values)
	}
}

func TestOpenLoopCap(t *testing.T) {
	for _, overflow := range []string{"wait", "drop"} {
		t.Run(overflow, func(t *testing.T) {
			// Each call takes 20 ms; 1,000/s with 2 in flight cannot keep up.
			s := &streamer{ttft: func(int) time.Duration { return 20 * time.Millisecond }}
			rec := newRecorder()
			c := load.Config{Rate: 1000, Arrival: "constant", MaxConcurrency: 2, Overflow: overflow, WarmupIterations: ptr(0), MeasurementIterations: ptr(50)}
			if err := driveOpenLoop(context.Background(), s, c, rec); err != nil {
				t.Fatal(err)
			}
			if s.peak.Load() > 2 {
				t.Errorf("peak %d over the cap", s.peak.Load())
			}
			late, dropped := rec.values["late_requests"], rec.values["dropped_requests"]
			sent := len(rec.obs[load.Measure])
			switch overflow {
			case "wait":
				if late < 40 || dropped != 0 || sent != 50 {
					t.Errorf("late %v dropped %v sent %d", late, dropped, sent)
				}
			case "drop":
				if dropped < 40 || late != 0 || sent+int(dropped) != 50 {
					t.Errorf("late %v dropped %v sent %d", late, dropped, sent)
				}
			}
		})
	}
}

func TestOpenLoopInterrupt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	rec := newRecorder()
	start := time.Now()
	err := driveOpenLoop(ctx, &streamer{}, load.Config{Rate: 100, WarmupIterations: ptr(0), MeasurementIterations: ptr(100000)}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 2*time.Second || len(rec.obs[load.Measure]) > 50 {
		t.Errorf("ran %v and %d calls after interruption", time.Since(start), len(rec.obs[load.Measure]))
	}
}

func TestGoodputAndSLO(t *testing.T) {
	// Odd requests take 200 ms to their first token, even ones 1 ms; the SLO is 100 ms.
	s := &streamer{tokens: 2, ttft: func(i int) time.Duration {
		if i%2 == 1 {
			return 200 * time.Millisecond
		}
		return time.Millisecond
	}}
	rec := newRecorder()
	c := load.Config{Concurrency: 8, WarmupIterations: ptr(0), MeasurementIterations: ptr(40), SLO: map[string]float64{"ttft_ms.p99": 100, "e2e_ms": 10000}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := driveClosedLoop(context.Background(), s, c, rec); err != nil {
		t.Fatal(err)
	}
	slo := rec.extra["slo"].(*result.SLO)
	if slo.Hold != false || !strings.Contains(strings.Join(slo.Failures, ";"), "ttft_ms.p99") {
		t.Errorf("slo section %v", slo)
	}
	// Goodput is the 20 requests that met the SLOs over the measured window.
	first, last := rec.obs[load.Measure][0].Start, rec.obs[load.Measure][0].End
	for _, o := range rec.obs[load.Measure] {
		if o.Start.Before(first) {
			first = o.Start
		}
		if o.End.After(last) {
			last = o.End
		}
	}
	want := 20 / last.Sub(first).Seconds()
	if g := rec.values["goodput_rps"]; math.Abs(g-want) > 0.01*want {
		t.Errorf("goodput %v, want %v", g, want)
	}
	// Half the requests meet the SLOs.
	ss := newServingSink(newRecorder(), c)
	ss.Begin(load.Measure)
	for _, o := range rec.obs[load.Measure] {
		ss.Observe(load.Measure, o, nil)
	}
	var st result.SweepStep
	ss.keeper.WithFigures(func(f *figures.Figures) { st = f.Step("") })
	if good := st.GoodputRPS / st.RPS; math.Abs(good-0.5) > 1e-9 {
		t.Errorf("%v of the requests met the SLOs, want 0.5 (20 of 40)", good)
	}
}

func TestSweep(t *testing.T) {
	s := &streamer{tokens: 2, ttft: func(int) time.Duration { return 5 * time.Millisecond }}
	rec := newRecorder()
	c := load.Config{Mode: load.ModeSweep, WarmupIterations: ptr(2), MeasurementIterations: ptr(40), MaxConcurrency: 16,
		SLO: map[string]float64{"ttft_ms.p99": 1000}, Sweep: &load.SweepConfig{Steps: 2, Search: 2}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := driveSweep(context.Background(), s, c, rec); err != nil {
		t.Fatal(err)
	}
	steps := rec.extra["sweep"].([]stepResult)
	var names []string
	for _, st := range steps {
		names = append(names, st.Name)
		if st.Requests != 40 {
			t.Errorf("step %s measured %d requests, want 40", st.Name, st.Requests)
		}
	}
	if len(steps) != 6 || steps[0].Name != "synchronous" || steps[1].Name != "throughput" {
		t.Fatalf("steps %v", names)
	}
	if !(steps[1].RPS > steps[0].RPS*3) {
		t.Errorf("throughput step %.0f req/s not well above synchronous %.0f", steps[1].RPS, steps[0].RPS)
	}
	if rec.values["slo_max_rps"] < steps[0].RPS {
		t.Errorf("slo_max_rps %v below the synchronous rate %v although every SLO holds", rec.values["slo_max_rps"], steps[0].RPS)
	}
	// The engine sees one warm-up and one measured phase.
	if len(rec.phases) != 2 || len(rec.obs[load.Warmup]) != 2 {
		t.Errorf("phases %v, %d warm-up calls", rec.phases, len(rec.obs[load.Warmup]))
	}
}

func TestValidateServing(t *testing.T) {
	tests := []struct {
		c   load.Config
		err string
	}{
		{load.Config{Mode: load.ModeRate, Rate: 5, Arrival: "weibull"}, `arrival "weibull"`},
		{load.Config{Mode: load.ModeRate, Rate: 5, Arrival: "gamma"}, "needs burstiness"},
		{load.Config{Mode: load.ModeConcurrency, Overflow: "queue"}, `overflow "queue"`},
		{load.Config{Mode: load.ModeConcurrency, Concurrency: -1}, "must not be negative"},
		{load.Config{Mode: load.ModeConcurrency, SLO: map[string]float64{"ttft.p99": 5}}, `unknown metric "ttft"`},
		{load.Config{Mode: load.ModeConcurrency, SLO: map[string]float64{"ttft_ms.p42": 5}}, `unknown statistic "p42"`},
		{load.Config{Mode: load.ModeConcurrency, SLO: map[string]float64{"ttft_ms.p99": 0}}, "must be above 0"},
	}
	for _, tt := range tests {
		err := tt.c.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Validate(%+v) = %v, want %q", tt.c, err, tt.err)
		}
	}
}

// fixed is a subject whose every observation is made by obs.
type fixed struct {
	obs func(i int) subject.Observation
}

func (f fixed) Do(_ context.Context, r subject.Request) (subject.Observation, error) {
	return f.obs(r.Index), nil
}
func (fixed) Close() error { return nil }

// stream returns an observation whose content events arrived at the given ms after t0.
func stream(ms ...int) subject.Observation {
	t0 := time.Now()
	o := subject.Observation{Start: t0}
	for _, m := range ms {
		o.Tokens = append(o.Tokens, subject.TokenEvent{At: t0.Add(time.Duration(m) * time.Millisecond), Tokens: 1})
	}
	o.FirstToken, o.End, o.OutputTokens = o.Tokens[0].At, o.Tokens[len(o.Tokens)-1].At, len(ms)
	return o
}

// TestClientBoundFromLag: a client whose own delays moved its figures is client_bound even with
// CPU to spare, and one whose delays moved nothing is not. Before, the only test of a closed loop
// was CPU above 0.9 of GOMAXPROCS, and it stayed off; then any send or read delay over 1 ms set it,
// and it fired at c=64 on the mockserver where every p99 was exact (docs/peers.md): reads are
// stamped by the kernel, so a late read moves a time only when it merges events the server sent
// apart, and a late send delays the request, not its TTFT.
func TestClientBoundFromLag(t *testing.T) {
	apart := func(o *subject.Observation) {
		o.Values[figures.ValueServerFirstTogether], o.Values[figures.ValueServerTogether] = 0, 0
	}
	for _, tt := range []struct {
		name   string
		open   bool  // an open loop at 500 req/s, else a closed loop of 2
		ms     []int // the events' arrivals
		values map[string]float64
		server func(*subject.Observation)
		want   string // in the warning; "" for not client_bound
	}{
		{"late reads merged first tokens", false, []int{10, 10, 15}, map[string]float64{figures.ValueReadDelay: 4, figures.ValueSendDelay: 0.05}, apart,
			"late reads (read delay p99 4.00 ms) took 100.0% of first tokens in one read with the next event although the server sent them apart"},
		{"late reads, nothing merged", false, []int{5, 10, 15}, map[string]float64{figures.ValueReadDelay: 4, figures.ValueSendDelay: 0.05}, apart, ""},
		{"server silent, reads later than a token", false, []int{10, 10, 15}, map[string]float64{figures.ValueReadDelay: 8, figures.ValueSendDelay: 0.05}, nil,
			"took 100.0% of first tokens in one read with the next event (the server does not say"},
		{"server silent, reads within a token", false, []int{10, 10, 15}, map[string]float64{figures.ValueReadDelay: 2, figures.ValueSendDelay: 0.05}, nil, ""},
		{"closed loop, send delay a fifth of e2e", false, []int{5, 10, 15}, map[string]float64{figures.ValueReadDelay: 0.05, figures.ValueSendDelay: 3}, nil,
			"send delay mean 3.00 ms is 20.0% of the e2e mean 15.00 ms"},
		{"closed loop, send delay 0.5% of e2e", false, []int{5, 300, 600}, map[string]float64{figures.ValueReadDelay: 0.05, figures.ValueSendDelay: 3}, nil, ""},
		{"open loop, send delay", true, []int{5, 10, 15}, map[string]float64{figures.ValueReadDelay: 0.05, figures.ValueSendDelay: 3}, nil, "send delay p99 3.00 ms exceeds 1ms"},
		{"on time", false, []int{5, 10, 15}, map[string]float64{figures.ValueReadDelay: 0.05, figures.ValueSendDelay: 0.05}, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := fixed{func(int) subject.Observation {
				o := stream(tt.ms...)
				o.Values = maps.Clone(tt.values)
				if tt.server != nil {
					tt.server(&o)
				}
				return o
			}}
			rec := newRecorder()
			c := load.Config{Mode: load.ModeConcurrency, Concurrency: 2, WarmupIterations: ptr(0), MeasurementIterations: ptr(50)}
			run := driveClosedLoop
			if tt.open {
				c = load.Config{Mode: load.ModeRate, Rate: 500, Arrival: "constant", WarmupIterations: ptr(0), MeasurementIterations: ptr(50)}
				run = driveOpenLoop
			}
			if err := run(context.Background(), s, c, rec); err != nil {
				t.Fatal(err)
			}
			w := strings.Join(rec.warnings, "\n")
			bound, _ := rec.extra[result.SectionClientBound].(bool)
			if tt.want != "" && (!bound || !strings.Contains(w, tt.want)) {
				t.Errorf("client_bound %v, warnings %q: want %q", bound, w, tt.want)
			}
			if tt.want == "" && (strings.Contains(w, "send delay") || strings.Contains(w, "read delay")) {
				t.Errorf("client_bound on a client whose delays moved nothing: %q", w)
			}
		})
	}
}

// TestCoalescedWarning: the warning compares what the client read together with what the server
// sent together, and fires above 1%. Before, it fired at 2% whatever the server did: a server
// that sent first tokens together was blamed on the client, and 1.5% went unsaid.
func TestCoalescedWarning(t *testing.T) {
	for _, tt := range []struct {
		name     string
		together int  // of 200 requests, those whose first two events arrived in one read
		server   int  // of those, the ones the server sent together
		said     bool // the server says what it sent together
		want     string
	}{
		{"server sent them together", 20, 20, true, ""},
		{"client read late", 20, 0, true, "10.0% of first tokens arrived in one read with the next although the server sent them apart"},
		{"1.5%, server silent", 3, 0, false, "1.5% of first tokens arrived in one read with the next and the server does not say"},
		{"1.5%, server apart", 3, 0, true, "1.5% of first tokens"},
		{"0.5%", 1, 0, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := fixed{func(i int) subject.Observation {
				o := stream(5, 10, 15)
				if i < tt.together {
					o = stream(10, 10, 15)
				}
				if tt.said {
					first := 0.0
					if i < tt.server {
						first = 1
					}
					o.Values = map[string]float64{figures.ValueServerFirstTogether: first, figures.ValueServerTogether: first}
				}
				return o
			}}
			rec := newRecorder()
			c := load.Config{Mode: load.ModeConcurrency, Concurrency: 1, WarmupIterations: ptr(0), MeasurementIterations: ptr(200)}
			if err := driveClosedLoop(context.Background(), s, c, rec); err != nil {
				t.Fatal(err)
			}
			var w []string
			for _, m := range rec.warnings {
				if strings.HasPrefix(m, "ttft:") {
					w = append(w, m)
				}
			}
			got := strings.Join(w, "\n")
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("warnings %q, want %q", got, tt.want)
			}
			for _, o := range rec.obs[load.Measure] {
				if _, ok := o.Values[figures.ValueServerFirstTogether]; ok {
					t.Fatalf("the server's figure reached the engine as a value: %v", o.Values)
				}
			}
			if got, want := rec.values["itl_coalesced_rate"], float64(tt.together)/400; math.Abs(got-want) > 1e-9 {
				t.Errorf("itl_coalesced_rate %v, want %v", got, want)
			}
		})
	}
}
