package capacity_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/internal/capacity"
	"github.com/inferbench/inferbench/internal/mockserver"
)

func TestObjectives(t *testing.T) {
	for _, tc := range []struct {
		name       string
		slos       map[string]float64
		attainment float64
		want       []capacity.Objective
		err        string
	}{
		{name: "each percentile its own objective", slos: map[string]float64{"ttft_ms.p99": 500, "e2e_ms.p90": 2000, "itl_ms": 50},
			want: []capacity.Objective{
				{Name: "e2e_ms.p90", Target: 0.9, Limits: []capacity.Limit{{Metric: "e2e_ms", Ms: 2000}}},
				{Name: "itl_ms", Target: 0.99, Limits: []capacity.Limit{{Metric: "itl_ms", Ms: 50}}},
				{Name: "ttft_ms.p99", Target: 0.99, Limits: []capacity.Limit{{Metric: "ttft_ms", Ms: 500}}},
			}},
		{name: "an attainment makes one goodput objective", slos: map[string]float64{"ttft_ms": 500, "tpot_ms.mean": 50}, attainment: 0.9,
			want: []capacity.Objective{{Name: "goodput", Target: 0.9, Limits: []capacity.Limit{{Metric: "tpot_ms", Ms: 50}, {Metric: "ttft_ms", Ms: 500}}}}},
		{name: "a mean is no fraction of requests", slos: map[string]float64{"ttft_ms.mean": 500}, err: "not a percentile"},
		{name: "no SLO", err: "at least one SLO"},
		{name: "unknown metric", slos: map[string]float64{"latency_ms.p99": 5}, err: "not \"latency_ms\""},
		{name: "attainment of 1", slos: map[string]float64{"ttft_ms": 5}, attainment: 1, err: "attainment 1"},
	} {
		got, err := capacity.Objectives(tc.slos, tc.attainment)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one with %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// bernoulli is a prober whose requests meet the objective independently with probability
// attain(rate), or in runs of cluster requests that meet or miss together.
func bernoulli(attain func(float64) float64, cluster int, seed uint64, sent *[]int) capacity.Prober {
	r := rand.New(rand.NewPCG(seed, 1))
	return func(ctx context.Context, t *capacity.Trial) error {
		n := 0
		met := true
		for i := range t.Max() {
			if i%cluster == 0 {
				met = r.Float64() < attain(t.Rate())
			}
			m := capacity.Measures{TTFT: 1, E2E: 1, ITLMax: math.NaN(), TPOT: math.NaN()}
			if !met {
				m.TTFT = 1e9
			}
			n++
			if t.Observe(i, m) {
				break
			}
		}
		if sent != nil {
			*sent = append(*sent, n)
		}
		return nil
	}
}

var ttft = []capacity.Objective{{Name: "ttft_ms.p90", Target: 0.9, Limits: []capacity.Limit{{Metric: "ttft_ms", Ms: 100}}}}

// TestStepExtendsWhileNotKnown: a step far from the target is decided at its first look; one at
// the target is not yet known and extends to its last.
func TestStepExtendsWhileNotKnown(t *testing.T) {
	var sent []int
	at := func(r float64) float64 {
		if r < 50 {
			return 1
		}
		return 0.9
	}
	res, err := capacity.Search(context.Background(), bernoulli(at, 1, 1, &sent), capacity.Options{Objectives: ttft, Start: 40, MaxSteps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 2 || res.Steps[0].Verdict != capacity.Pass || res.Steps[1].Verdict != capacity.Unknown {
		t.Fatalf("steps %+v, want a pass at 40 and a step not yet known at 80", res.Steps)
	}
	if sent[0] != 200 || sent[1] != 3200 || res.Steps[1].Looks != 5 {
		t.Errorf("requests sent %v, looks %d: want 200 (decided at the first look) and 3200 (all five looks)", sent, res.Steps[1].Looks)
	}
}

// TestClustersWidenTheInterval: misses that come 50 at a time say less than as many misses
// spread out: the interval is wider and the effective sample size a fiftieth.
func TestClustersWidenTheInterval(t *testing.T) {
	const n = 2000
	spread, clustered := make([]bool, n), make([]bool, n)
	for i := range n {
		spread[i] = i%10 != 0         // every tenth request misses
		clustered[i] = (i/50)%10 != 0 // every tenth run of 50 misses
	}
	s, _ := capacity.EstimateOf(spread, 0.05, 1)
	c, l := capacity.EstimateOf(clustered, 0.05, 1)
	if s.Attainment != 0.9 || c.Attainment != 0.9 {
		t.Fatalf("attainments %v and %v, want 0.9", s.Attainment, c.Attainment)
	}
	if l != 50 {
		t.Errorf("cluster length %v, want 50", l)
	}
	if c.EffectiveN > n/40 || s.EffectiveN < n/2 {
		t.Errorf("effective sample sizes: spread %.0f, clustered %.0f of %d; want the clustered at most a fortieth", s.EffectiveN, c.EffectiveN, n)
	}
	if c.Upper-c.Lower < 4*(s.Upper-s.Lower) {
		t.Errorf("intervals: spread %.4f-%.4f, clustered %.4f-%.4f; want the clustered much wider", s.Lower, s.Upper, c.Lower, c.Upper)
	}
}

// TestSearchAgainstTheModel runs 20 searches against the mockserver's capacity model, whose
// capacity under these SLOs is known (mockserver.Capacity.Truth says 51.52 req/s;
// TestTruthIsTheKnee checks it): the lower bound covers it, the estimate is near it, in few steps.
// make capacity-coverage runs 100 of each of three models (docs/serving.md).
func TestSearchAgainstTheModel(t *testing.T) {
	const truth = 51.52
	m := mockserver.Capacity{Slots: 8, PrefillMs: 4, TokenMs: 1, BatchSlowdown: 0.05}
	obj, err := capacity.Objectives(map[string]float64{"ttft_ms.p90": 20, "e2e_ms.p90": 80}, 0)
	if err != nil {
		t.Fatal(err)
	}
	covered, near := 0, 0
	for seed := range uint64(20) {
		res, err := capacity.Search(context.Background(), m.Prober(32, seed+1000, nil), capacity.Options{Objectives: obj, Start: m.Saturation(32) / 2})
		if err != nil {
			t.Fatal(err)
		}
		if res.LowerRPS <= truth {
			covered++
		}
		if math.Abs(res.CapacityRPS-truth)/truth <= 0.05 {
			near++
		}
		if len(res.Steps) > 12 {
			t.Errorf("seed %d: %d steps", seed, len(res.Steps))
		}
		if len(res.Curve) != len(obj) || len(res.Curve[0]) != len(res.Steps) {
			t.Errorf("seed %d: curve %v for %d steps", seed, res.Curve, len(res.Steps))
		}
	}
	if covered < 19 || near < 18 {
		t.Errorf("of 20 searches the bound covered the truth in %d (want 19 or more), the estimate was within 5%% in %d (want 18 or more)", covered, near)
	}
}

// TestEstimatePoolsTheKnee: near the knee each step reads its attainment a few points off (its
// misses cluster); the estimate pools the steps around the crossing rather than interpolating
// between the two beside it, and a step not yet known does not cap it the way a fail does.
func TestEstimatePoolsTheKnee(t *testing.T) {
	// The truth: attainment 0.9 - 0.01 × (rate - 50), the target 0.9 crossed at 50 req/s.
	step := func(rate, noise float64, v capacity.Verdict) capacity.Step {
		return capacity.Step{Rate: rate, Requests: 1600, Verdict: v,
			Estimates: []capacity.Estimate{{Attainment: 0.9 - 0.01*(rate-50) + noise, EffectiveN: 100}}}
	}
	for _, tc := range []struct {
		name   string
		steps  []capacity.Step
		lo, hi float64
		within float64 // of 50, as a fraction
	}{
		// The two steps beside the knee read 2.5 points off, in opposite directions: the
		// isotonic fit pools them at the target and crosses at 51.
		{name: "noisy pair at the knee", lo: 45, hi: 55, within: 0.005, steps: []capacity.Step{
			step(45, 0, capacity.Pass), step(47.5, 0, capacity.Unknown), step(49, -0.025, capacity.Unknown),
			step(51, 0.025, capacity.Unknown), step(52.5, 0, capacity.Unknown), step(55, 0, capacity.Fail)}},
		// A step at 48 read 3.5 points low and left the search's bracket at 48 (the isotonic
		// fit crosses at 47.7); the steps around it, pooled with it, say 49-50.
		{name: "a step not yet known reads low", lo: 44, hi: 48, within: 0.02, steps: []capacity.Step{
			step(44, 0, capacity.Pass), step(46, 0, capacity.Unknown), step(47, 0, capacity.Unknown),
			step(48, -0.035, capacity.Unknown), step(52, 0, capacity.Unknown), step(56, 0, capacity.Fail)}},
	} {
		r := capacity.Finish(ttft, tc.steps, tc.lo, tc.hi)
		if math.Abs(r.CapacityRPS-50)/50 > tc.within {
			t.Errorf("%s: capacity %.2f req/s, want 50 within %.1f%%", tc.name, r.CapacityRPS, 100*tc.within)
		}
	}
}

// TestEarlyPassNearSaturation: above 40 req/s the server cannot keep up, but a step there starts
// on an idle server, whose first 200 requests meet the SLO before its queue grows; from 63 none
// does. The search doubles from 31 to 62, which passes at its first look, and every step above
// fails at once: a pass at a first look, which a step above with long clusters of misses no
// longer lets hold, must not hold the search's bracket either, or the search converges at 62.
// The bound stays at or below 40 and the estimate near it.
func TestEarlyPassNearSaturation(t *testing.T) {
	probe := func(ctx context.Context, tr *capacity.Trial) error {
		for i := range tr.Max() {
			met := tr.Rate() < 40 || (tr.Rate() < 63 && i < 200)
			m := capacity.Measures{TTFT: 1, E2E: 1, ITLMax: math.NaN(), TPOT: math.NaN()}
			if !met {
				m.TTFT = 1e9
			}
			if tr.Observe(i, m) {
				break
			}
		}
		return nil
	}
	res, err := capacity.Search(context.Background(), probe, capacity.Options{Objectives: ttft, Start: 31})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, s := range res.Steps {
		steps = append(steps, fmt.Sprintf("%.1f:%s/%d", s.Rate, s.Verdict, s.Requests))
	}
	if res.LowerRPS > 40 || math.Abs(res.CapacityRPS-40)/40 > 0.1 {
		t.Errorf("capacity %.1f, lower bound %.1f req/s; want the bound at most 40 and the estimate within 10%% of it (steps %v)", res.CapacityRPS, res.LowerRPS, steps)
	}
}

// TestNotYetKnownIsNotPassed: a step whose requests all meet their SLO but whose time to first
// token rises through it (a queue growing, or a client falling behind) is not yet known, not a
// pass; when it is the search's last, the warning says so instead of that every step passed,
// and the capacity and its bound stay 0, as the table prints them.
func TestNotYetKnownIsNotPassed(t *testing.T) {
	probe := func(ctx context.Context, tr *capacity.Trial) error {
		for i := range tr.Max() {
			if tr.Observe(i, capacity.Measures{TTFT: 1 + float64(i), E2E: 1, ITLMax: math.NaN(), TPOT: math.NaN()}) {
				break
			}
		}
		return nil
	}
	res, err := capacity.Search(context.Background(), probe, capacity.Options{Objectives: ttft, Start: 50, Min: 40, Max: 40, MaxSteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 1 || res.Steps[0].Verdict != capacity.Unknown || res.LowerRPS != 0 {
		t.Fatalf("steps %+v, lower bound %v; want one step not yet known and no bound", res.Steps, res.LowerRPS)
	}
	w := strings.Join(res.Warnings, "\n")
	if strings.Contains(w, "every step passed") || !strings.Contains(w, "not yet known") || !strings.Contains(w, "none passed") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// slowClient runs each step on model m in simulated time, as m.Prober does, through a client
// that lags at most times steps (0: every one): it adds ms to each request's times, as a
// client's late sends and reads do, and says so (Trial.ClientBound), as the load driver does when
// it marks a step client_bound.
func slowClient(m mockserver.Capacity, seed uint64, ms float64, times int) capacity.Prober {
	return slowClientAbove(m, seed, ms, times, 0)
}

// slowClientAbove is slowClient lagging only at rates of at least above (req/s): a client with
// too little CPU to send faster.
func slowClientAbove(m mockserver.Capacity, seed uint64, ms float64, times int, above float64) capacity.Prober {
	step, lagged := uint64(0), 0
	return func(ctx context.Context, t *capacity.Trial) error {
		step++
		lag := 0.0
		if (times == 0 || lagged < times) && t.Rate() >= above {
			lagged++
			lag = ms
			t.ClientBound(fmt.Sprintf("schedule lag p99 %.2f ms exceeds 1ms", ms), ms)
		}
		warm := t.Warmup()
		arr := mockserver.Poisson(t.Rate(), warm+t.Max(), 32, seed*1000+step)
		tms := m.Simulate(arr)
		for i := warm; i < len(arr); i++ {
			me := tms[i].Measures(32)
			me.TTFT += lag
			me.E2E += lag
			me.TTFTSched, me.E2ESched = me.TTFT, me.E2E
			if t.Observe(i-warm, me) {
				break
			}
		}
		return ctx.Err()
	}
}

// TestClientBoundStepIsNotJudged: a step the client paced is not read as the server's. The
// model's capacity is 51.5 req/s and the search starts at 46.3: a client lagging 30 ms there
// turns that step (and any below the truth) into a fail, and a search reading it so ends far
// below the truth. Such a step is not yet known, the same rate runs again (a burst of other work
// passes), and the search ends as without the lag; a client that lags again stops the search with
// an error naming the rate and the lag; a lag well inside the limits is left to the warnings.
func TestClientBoundStepIsNotJudged(t *testing.T) {
	const truth = 51.52
	m := mockserver.Capacity{Slots: 8, PrefillMs: 4, TokenMs: 1, BatchSlowdown: 0.05}
	obj, err := capacity.Objectives(map[string]float64{"ttft_ms.p90": 20, "e2e_ms.p90": 80}, 0)
	if err != nil {
		t.Fatal(err)
	}
	opt := capacity.Options{Objectives: obj, Start: m.Saturation(32) / 2}
	const seed = 1003

	// Once: the step again at the same rate, and the answer of a search without the lag.
	clean, err := capacity.Search(context.Background(), slowClient(m, seed, 0, 0), opt)
	if err != nil {
		t.Fatal(err)
	}
	res, err := capacity.Search(context.Background(), slowClient(m, seed, 30, 1), opt)
	if err != nil {
		t.Fatalf("a client lagging at one step: %v", err)
	}
	if len(res.Steps) < 2 || res.Steps[0].ClientBound == "" || res.Steps[0].Verdict != capacity.Unknown || res.Steps[1].Rate != res.Steps[0].Rate || res.Steps[1].ClientBound != "" {
		t.Fatalf("steps %+v: want the first client_bound, not yet known, and run again at its rate", res.Steps)
	}
	if math.Abs(res.CapacityRPS-truth)/truth > 0.05 || res.LowerRPS > truth || res.LowerRPS == 0 {
		t.Errorf("capacity %.2f (lower %.2f) with one client_bound step; without it %.2f (lower %.2f); truth %.2f",
			res.CapacityRPS, res.LowerRPS, clean.CapacityRPS, clean.LowerRPS, truth)
	}

	// Always: the rate runs twice, then half of it twice; with no step passed the search stops,
	// naming the lowest rate and the lag, and keeps no fail.
	res, err = capacity.Search(context.Background(), slowClient(m, seed, 30, 0), opt)
	var cb *capacity.ClientBoundError
	if !errors.As(err, &cb) || cb.Rate != opt.Start/2 || !strings.Contains(err.Error(), "30.00 ms") || !strings.Contains(err.Error(), "quieter machine") {
		t.Fatalf("a client lagging at every step: error %v, want a ClientBoundError at %.4g req/s naming the 30 ms lag and a hint", err, opt.Start/2)
	}
	if len(res.Steps) != 4 || res.LowerRPS != 0 || res.CapacityRPS != 0 || !res.ClientLimited() || len(res.Warnings) == 0 || !strings.Contains(res.Warnings[len(res.Warnings)-1], "client_bound twice") {
		t.Errorf("result %+v: want four steps not judged, no bound, and the stop in its warnings", res)
	}
	for _, st := range res.Steps {
		if st.Verdict != capacity.Unknown || st.ClientBound == "" {
			t.Errorf("step %+v: want not yet known, client_bound", st)
		}
	}

	// A lag of 0.5 ms against limits of 20 and 80 ms moves no verdict: the search goes on.
	res, err = capacity.Search(context.Background(), slowClient(m, seed, 0.5, 0), opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range res.Steps {
		if st.ClientBound != "" {
			t.Errorf("step %+v: a 0.5 ms lag marked client_bound", st)
		}
	}
}

// TestClientLimitedSearchAnswers: a client that cannot send 40 req/s or more without lagging
// (issue 42: a busy 2-core runner, the server's capacity 51.5 req/s) limits the search, which
// judges the rates below and answers that the capacity is at least the highest rate that passed
// there, close below the client's limit, naming the limit, the lag and what to do; no error, no
// estimate above what it judged. Before, the search stopped with no answer at all.
func TestClientLimitedSearchAnswers(t *testing.T) {
	const truth, above = 51.52, 40.0
	m := mockserver.Capacity{Slots: 8, PrefillMs: 4, TokenMs: 1, BatchSlowdown: 0.05}
	obj, err := capacity.Objectives(map[string]float64{"ttft_ms.p90": 20, "e2e_ms.p90": 80}, 0)
	if err != nil {
		t.Fatal(err)
	}
	opt := capacity.Options{Objectives: obj, Start: m.Saturation(32) / 2}
	res, err := capacity.Search(context.Background(), slowClientAbove(m, 1003, 30, 0, above), opt)
	if err != nil {
		t.Fatalf("a client limited at %v req/s: %v", above, err)
	}
	if !res.ClientLimited() || res.ClientLimitRPS < above || res.ClientLimitRPS > opt.Start || res.CapacityRPS != 0 {
		t.Errorf("limit %.4g, capacity %.4g: want client-limited at a rate of %v or more, and no estimate", res.ClientLimitRPS, res.CapacityRPS, above)
	}
	if res.LowerRPS >= above || res.LowerRPS < 0.85*above {
		t.Errorf("at least %.4g req/s: want a bound close below the client's limit %v (truth %v)", res.LowerRPS, above, truth)
	}
	for _, st := range res.Steps {
		if st.Rate >= above && st.ClientBound == "" || st.Rate < above && st.ClientBound != "" {
			t.Errorf("step %+v: judged above the client's limit, or marked below it", st)
		}
	}
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, fmt.Sprintf("at least %.4g req/s", res.LowerRPS)) || !strings.Contains(w, "30.00 ms") || !strings.Contains(w, "give the client room") {
		t.Errorf("warnings %q: want the answer, the client's lag and what to do", res.Warnings)
	}
}

// TestNoPassNoCapacity: a search in which no step held its SLOs (every step failed) has no
// capacity, whatever its fit says: the fit, below the target at every rate, crossed it at the
// lowest rate tried, and the search printed and stored that rate as the capacity.
func TestNoPassNoCapacity(t *testing.T) {
	res, err := capacity.Search(context.Background(), bernoulli(func(float64) float64 { return 0.5 }, 1, 1, nil),
		capacity.Options{Objectives: ttft, Start: 8, Min: 40, Max: 40, MaxSteps: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 4 || res.Steps[3].Rate != 1 {
		t.Fatalf("steps %+v, want four halving from 8 req/s", res.Steps)
	}
	if res.CapacityRPS != 0 || res.LowerRPS != 0 {
		t.Errorf("capacity %v, lower bound %v: want neither without a step that held", res.CapacityRPS, res.LowerRPS)
	}
	if len(res.Curve) != 1 || len(res.Curve[0]) != 4 {
		t.Errorf("curve %v: the steps' fit is kept", res.Curve)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "no step passed") {
		t.Errorf("warnings %q", res.Warnings)
	}
}
