package certify

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

func value(v float64) *float64 { return &v }

// scenario is a serving scenario of n requests with a TTFT p50 of 20 ms, every figure in order.
func scenario(t *testing.T, n int) *result.Scenario {
	t.Helper()
	r := &result.Scenario{Metrics: map[string]result.Metric{}, Iterations: result.Iterations{Measured: n}, Environment: map[string]any{}}
	for _, m := range []string{"ttft_ms", "e2e_ms", "send_delay_ms", "read_delay_ms"} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 20 + float64(i%7)
			if strings.HasSuffix(m, "delay_ms") {
				xs[i] = 0.01
			}
		}
		s, err := stats.Summarize(xs)
		if err != nil {
			t.Fatal(err)
		}
		r.Metrics[m] = result.Metric{Unit: "ms", Better: "lower", Summary: &s}
	}
	r.Metrics["output_short_rate"] = result.Metric{Value: value(0)}
	r.Metrics["usage_mismatch_rate"] = result.Metric{Value: value(0)}
	r.Metrics["client_stall_p99_ms"] = result.Metric{Value: value(0.05)}
	return r
}

func verdict(t *testing.T, c *result.Certificate, check string) result.CertCheck {
	t.Helper()
	k, ok := c.Check(check)
	if !ok {
		t.Fatalf("no check %s in %+v", check, c)
	}
	return k
}

// TestChecks sets one figure of a healthy scenario wrong at a time and reads its check's
// verdict; the healthy scenario passes every check it has data for.
func TestChecks(t *testing.T) {
	cases := []struct {
		name, check, want string
		edit              func(r *result.Scenario)
	}{
		{"healthy", "client_delays", result.CertPass, func(*result.Scenario) {}},
		// A paced client: a read delay p99 of 5 ms against a TTFT p50 of 23 ms (over 10%).
		{"paced client", "client_delays", result.CertFail, func(r *result.Scenario) {
			m := r.Metrics["read_delay_ms"]
			s := *m.Summary
			s.P99 = 5
			m.Summary = &s
			r.Metrics["read_delay_ms"] = m
		}},
		// The serving load's own client_bound verdict fails the check whatever the delays.
		{"client bound", "client_delays", result.CertFail, func(r *result.Scenario) {
			r.Extra.ClientBound = true
			r.Warnings = []string{"client_bound: the client used 1.95 of its 2 CPUs: figures may show the client's limits"}
		}},
		// Against an SLO of 100 ms, 0.5 ms is 0.5%: pass; 2 ms is 2%: warn.
		{"slo reference", "client_delays", result.CertWarn, func(r *result.Scenario) {
			r.Extra.SLO = &result.SLO{Objectives: map[string]float64{"ttft_ms.p99": 100, "e2e_ms.p99": 1000}}
			m := r.Metrics["send_delay_ms"]
			s := *m.Summary
			s.P99 = 2
			m.Summary = &s
			r.Metrics["send_delay_ms"] = m
		}},
		{"stalls", "loop_stalls", result.CertWarn, func(r *result.Scenario) { r.Metrics["client_stall_p99_ms"] = result.Metric{Value: value(1.5)} }},
		{"stalls at the size of ttft", "loop_stalls", result.CertFail, func(r *result.Scenario) {
			r.Metrics["client_stall_p99_ms"] = result.Metric{Value: value(4)}
			delete(r.Metrics, "read_delay_ms")
		}},
		// With kernel stamps a stall moves figures only through late reads (client_delays).
		{"stalls, stamped arrivals", "loop_stalls", result.CertWarn, func(r *result.Scenario) { r.Metrics["client_stall_p99_ms"] = result.Metric{Value: value(4)} }},
		// A server that stops short.
		{"stops short", "output_length", result.CertFail, func(r *result.Scenario) { r.Metrics["output_short_rate"] = result.Metric{Value: value(0.3)} }},
		{"a few short", "output_length", result.CertWarn, func(r *result.Scenario) { r.Metrics["output_short_rate"] = result.Metric{Value: value(0.02)} }},
		// A server whose usage disagrees.
		{"usage disagrees", "usage", result.CertFail, func(r *result.Scenario) { r.Metrics["usage_mismatch_rate"] = result.Metric{Value: value(1)} }},
		{"no usage", "usage", result.CertNone, func(r *result.Scenario) { delete(r.Metrics, "usage_mismatch_rate") }},
		{"errors", "errors", result.CertFail, func(r *result.Scenario) { r.Iterations.Failed = 100 }},
		{"an error", "errors", result.CertWarn, func(r *result.Scenario) { r.Iterations.Failed = 1 }},
		// A warm cache: prompts that repeat across runs, found in a cache the server had used.
		{"warm cache", "prefix_cache", result.CertFail, func(r *result.Scenario) {
			r.Environment["prompts"] = "repeated across runs (cache_key)"
			r.Extra.Resources = cacheGauges(92, 40)
		}},
		{"per-run prompts, cold", "prefix_cache", result.CertPass, func(r *result.Scenario) {
			r.Environment["prompts"] = "per-run (a fresh cache key)"
			r.Extra.Resources = cacheGauges(0.4, 40)
		}},
		{"per-run prompts sharing a prefix", "prefix_cache", result.CertPass, func(r *result.Scenario) {
			r.Environment["prompts"], r.Environment["prompts_share"] = "per-run (a fresh cache key)", true
			r.Extra.Resources = cacheGauges(50, 40)
		}},
		{"per-run prompts found in the cache", "prefix_cache", result.CertWarn, func(r *result.Scenario) {
			r.Environment["prompts"] = "per-run (a fresh cache key)"
			r.Extra.Resources = cacheGauges(50, 0)
		}},
		{"no counters", "prefix_cache", result.CertNone, func(*result.Scenario) {}},
		{"throttled", "gpu_clocks", result.CertFail, func(r *result.Scenario) {
			r.Extra.Resources = &result.Resources{Details: &result.ResourceDetails{GPUNoise: &result.GPUNoise{Samples: 100, Reasons: map[string]int{"hw_thermal_slowdown": 30, "gpu_idle": 100}}}}
		}},
		{"hot", "gpu_clocks", result.CertWarn, func(r *result.Scenario) {
			r.Extra.Resources = &result.Resources{Metrics: []result.Aggregate{{Name: "gpu_temp_c", Kind: "gauge", N: 10, Max: 88}},
				Details: &result.ResourceDetails{GPUNoise: &result.GPUNoise{Samples: 100, Reasons: map[string]int{"gpu_idle": 3}}}}
		}},
		{"no gpu", "gpu_clocks", result.CertNone, func(*result.Scenario) {}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := scenario(t, 1000)
			c.edit(r)
			cert := Scenario(r, Evidence{})
			if k := verdict(t, cert, c.check); k.Verdict != c.want {
				t.Errorf("%s: %s, want %s: %+v", c.check, k.Verdict, c.want, k)
			}
			if c.want == result.CertFail && cert.Verdict != result.CertFail {
				t.Errorf("certificate %s with a failing check", cert.Verdict)
			}
		})
	}
}

// cacheGauges are the server scrape's gauges: the hit rate during the run and before it.
// A server with a prior hit rate had served 10,000 prompt tokens; one without, none.
func cacheGauges(hit, prior float64) *result.Resources {
	before := 0.0
	if prior > 0 {
		before = 10000
	}
	return &result.Resources{Metrics: []result.Aggregate{
		{Name: "server_prefix_cache_hit_pct", Kind: "gauge", N: 3, Last: hit},
		{Name: "server_prefix_cache_prior_pct", Kind: "gauge", N: 3, Last: prior},
		{Name: "server_prompt_tokens_before", Kind: "gauge", N: 3, Last: before},
	}}
}

// TestP99From50Requests: a p99 from 50 requests is marked (the samples check warns and the
// metric's note says so); 1,000 independent requests suffice for p99 but not for the p99.9 they
// report, and 4,000 for both.
func TestP99From50Requests(t *testing.T) {
	r := scenario(t, 50)
	k := verdict(t, Scenario(r, Evidence{}), "samples")
	if k.Verdict != result.CertWarn || !strings.Contains(k.Figure, "p99 needs 368") {
		t.Errorf("samples %+v, want a warning that p99 needs 368", k)
	}
	if n := r.Metrics["ttft_ms"].Note; !strings.Contains(n, "too few requests: p95 needs 72, p99 needs 368 (effective 50 of 50)") {
		t.Errorf("ttft_ms note %q", n)
	}
	r = scenario(t, 1000)
	if k := verdict(t, Scenario(r, Evidence{}), "samples"); k.Verdict != result.CertWarn || strings.Contains(k.Figure, "p99 ") || !strings.Contains(k.Figure, "p99.9 needs 3688") {
		t.Errorf("1,000 requests: %+v", k)
	}
	r = scenario(t, 4000)
	if k := verdict(t, Scenario(r, Evidence{}), "samples"); k.Verdict != result.CertPass {
		t.Errorf("4,000 requests: %+v", k)
	}
}

// TestCorrelatedRequests: 1,000 requests whose times follow one another (a queue that drifts)
// count as fewer, and their p99 is marked; the same times shuffled are not.
func TestCorrelatedRequests(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 1000)
	x := 20.0
	for i := range xs {
		x = 20 + 0.95*(x-20) + rng.NormFloat64()
		xs[i] = x
	}
	if eff := Effective(xs); eff > 100 {
		t.Errorf("effective size %.0f of 1,000 requests with lag-1 correlation 0.95, want under 100", eff)
	}
	r := scenario(t, 1000)
	k := verdict(t, Scenario(r, Evidence{Ordered: map[string][]float64{"ttft_ms": xs}}), "samples")
	if k.Verdict != result.CertWarn || !strings.Contains(k.Figure, "ttft_ms from 1000 requests") {
		t.Errorf("correlated: %+v", k)
	}
	rng.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	if eff := Effective(xs); eff < 800 {
		t.Errorf("shuffled: effective size %.0f, want near 1,000", eff)
	}
}

func TestNeeded(t *testing.T) {
	for q, want := range map[float64]int{0.99: 368, 0.999: 3688, 0.95: 72, 0.5: 6} {
		if got := Needed(q); got != want {
			t.Errorf("Needed(%v) = %d, want %d", q, got, want)
		}
	}
}

// TestSteadyWindow: a closed loop whose last requests drain takes them out of its window.
func TestSteadyWindow(t *testing.T) {
	cases := []struct {
		name   string
		steady *figures.Steady
		want   string
	}{
		{"steady", &figures.Steady{Inside: 950, Total: 1000, Level: 8}, result.CertPass},
		{"long drain", &figures.Steady{Inside: 700, Total: 1000, Level: 64}, result.CertWarn},
		{"no steady state", &figures.Steady{Inside: 100, Total: 1000, Level: 512}, result.CertFail},
		{"unknown", nil, result.CertNone},
	}
	for _, c := range cases {
		st := c.steady
		if st != nil {
			st.Start = time.Unix(0, 0)
			st.End = st.Start.Add(time.Second)
		}
		k := verdict(t, Scenario(scenario(t, 1000), Evidence{Steady: st}), "steady_window")
		if k.Verdict != c.want {
			t.Errorf("%s: %+v, want %s", c.name, k, c.want)
		}
	}
}
