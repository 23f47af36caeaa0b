package certify

import (
	"fmt"
	"math"
	"strings"

	"github.com/inferbench/inferbench/result"
)

// Needed returns the requests a percentile q (0.99 for p99) needs: the smallest n with a chance
// below 2.5% that none of n independent requests lies above it, ln(0.025) / ln(q), rounded up
// (p99: 368, p99.9: 3,688, as guidellm's documentation gives them).
func Needed(q float64) int {
	return int(math.Ceil(math.Log(0.025)/math.Log(q) - 1e-9))
}

// Effective returns the effective sample size of xs, in the order the requests were taken:
// n (1 - ρ) / (1 + ρ) with ρ the lag-1 autocorrelation, when it is positive (queued requests
// that wait behind one another have correlated times, and tell less than as many independent
// ones), else n.
func Effective(xs []float64) float64 {
	n := len(xs)
	if n < 3 {
		return float64(n)
	}
	var mean float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	var num, den float64
	for i, x := range xs {
		den += (x - mean) * (x - mean)
		if i > 0 {
			num += (x - mean) * (xs[i-1] - mean)
		}
	}
	if den == 0 {
		return float64(n)
	}
	rho := num / den
	if rho <= 0 {
		return float64(n)
	}
	return float64(n) * (1 - rho) / (1 + rho)
}

// percentiles are the reported percentiles judged for their requests.
var percentiles = []struct {
	name string
	q    float64
}{{"p90", 0.90}, {"p95", 0.95}, {"p99", 0.99}, {"p99.9", 0.999}}

// sampled are the per-request metrics whose percentiles are judged.
var sampled = []string{"ttft_ms", "tpot_ms", "e2e_ms"}

// samples judges whether each reported percentile of the per-request metrics has the requests it
// needs (Needed), counted by their effective number (Effective) where the requests' order was
// kept. A percentile without them warns, and its metric's note says so.
func samples(r *result.Scenario, ev Evidence) result.CertCheck {
	const name = "samples"
	var short []string
	judgedAny := false
	worst := math.Inf(1)
	for _, m := range sampled {
		s := summaryOf(r, m)
		if s == nil {
			continue
		}
		judgedAny = true
		eff := float64(s.N)
		if xs, ok := ev.Ordered[m]; ok && len(xs) == s.N {
			eff = Effective(xs)
		}
		var lacking []string
		for _, p := range percentiles {
			if p.name == "p99.9" && s.P999 == nil {
				continue
			}
			if need := Needed(p.q); eff < float64(need) {
				lacking = append(lacking, fmt.Sprintf("%s needs %d", p.name, need))
				worst = min(worst, eff/float64(need))
			}
		}
		if len(lacking) == 0 {
			continue
		}
		what := fmt.Sprintf("%s from %d requests (effective %.0f): %s", m, s.N, eff, strings.Join(lacking, ", "))
		short = append(short, what)
		met := r.Metrics[m]
		met.Note = strings.TrimPrefix(met.Note+"; too few requests: "+strings.Join(lacking, ", ")+fmt.Sprintf(" (effective %.0f of %d)", eff, s.N), "; ")
		r.Metrics[m] = met
	}
	if !judgedAny {
		return none(name, "no per-request figure")
	}
	if len(short) == 0 {
		return result.CertCheck{Name: name, Verdict: result.CertPass, Figure: "every reported percentile has the requests it needs"}
	}
	return result.CertCheck{Name: name, Verdict: result.CertWarn, Value: worst, Unit: "ratio", Limit: 1,
		Figure: strings.Join(short, "; "),
		Hint:   "measure more requests (measurement_iterations, duration) before reading those percentiles as facts"}
}

// steadyWindow judges the share of measured requests that started outside the steady window
// (ramp-up and drain), which the figures over all measured requests take in.
func steadyWindow(ev Evidence) result.CertCheck {
	st := ev.Steady
	if st == nil || st.Total == 0 {
		return none("steady_window", "not found (fewer than two requests)")
	}
	out := st.Outside()
	c := judged("steady_window", out, SteadyWarn, SteadyFail)
	c.Unit = "ratio"
	c.Figure = fmt.Sprintf("%d of %d requests inside the window at %d in flight (%.2f s); ramp-up and drain %s",
		st.Inside, st.Total, st.Level, st.End.Sub(st.Start).Seconds(), pct(out))
	if c.Verdict != result.CertPass {
		c.Hint = "the figures take in the ramp-up and drain: measure more requests per stream (measurement_iterations well above concurrency), or warm up longer"
	}
	return c
}

// slowing are the GPU clock event reasons that lower clocks under load by heat or power.
var slowing = []string{"sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"}

// gpuClocks judges the GPU's clock event ("throttle") reasons and temperature over the window
// (NVML, extra.resources.details.gpu_noise and gpu_temp_c): any sample with clocks lowered by heat
// or power warns, more than ThrottleFail of them fails; HotC or hotter warns.
func gpuClocks(r *result.Scenario) result.CertCheck {
	const name = "gpu_clocks"
	res := r.Extra.Resources
	if res == nil || res.Details == nil || res.Details.GPUNoise == nil {
		return none(name, "no GPU monitored")
	}
	n := res.Details.GPUNoise
	if n.Unavailable != "" || n.Samples == 0 {
		return none(name, "clock event reasons unknown: "+n.Unavailable)
	}
	slowed, seen := 0, []string{}
	for _, reason := range slowing {
		if k := n.Reasons[reason]; k > 0 {
			slowed = max(slowed, k)
			seen = append(seen, fmt.Sprintf("%s in %d of %d samples", reason, k, n.Samples))
		}
	}
	share := float64(slowed) / float64(n.Samples)
	c := judged(name, share, 0, ThrottleFail)
	c.Unit = "ratio"
	c.Figure = "clocks never lowered by heat or power"
	if len(seen) > 0 {
		c.Figure = strings.Join(seen, ", ")
	}
	if t, ok := res.Get(gpuTemp); ok && t.N > 0 {
		c.Figure += fmt.Sprintf("; temperature max %.0f °C", t.Max)
		if t.Max >= HotC && c.Verdict == result.CertPass {
			c.Verdict = result.CertWarn
		}
	}
	if c.Verdict != result.CertPass {
		c.Hint = "the GPU slowed itself: cool it, raise its power limit, or lock its clocks (nvidia-smi -lgc) before measuring"
	}
	return c
}
