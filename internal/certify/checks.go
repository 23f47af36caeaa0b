package certify

import (
	"fmt"
	"math"
	"strings"

	"github.com/inferbench/inferbench/result"
)

// The monitors' gauges the checks read, by name (packages internal/monitor/scrape and gpu, which
// this package does not import: they bring the Prometheus parser and NVML).
const (
	cacheHit   = "server_prefix_cache_hit_pct"
	cachePrior = "server_prefix_cache_prior_pct"
	cacheUsed  = "server_prompt_tokens_before"
	gpuTemp    = "gpu_temp_c"
)

// judged returns a check of value against the fail and warn limits (higher is worse).
func judged(name string, v, warn, fail float64) result.CertCheck {
	c := result.CertCheck{Name: name, Verdict: result.CertPass, Value: v, Limit: fail}
	switch {
	case v > fail:
		c.Verdict = result.CertFail
	case v > warn:
		c.Verdict = result.CertWarn
	}
	return c
}

func none(name, why string) result.CertCheck {
	return result.CertCheck{Name: name, Verdict: result.CertNone, Figure: why}
}

// clientDelays judges the client's own delays, p99 of each: an open loop's schedule lag, the send
// delay and the read delay, the largest against the reference (ClientWarn, ClientFail); and the
// serving load's client_bound verdict, which fails it.
func clientDelays(r *result.Scenario, ev Evidence, ref float64, refName string) result.CertCheck {
	const name = "client_delays"
	worst, what := math.NaN(), ""
	delays := []string{"send_delay_ms", "read_delay_ms"}
	if ev.OpenLoop {
		delays = append([]string{"schedule_lag_ms"}, delays...)
	}
	for _, m := range delays {
		if s := summaryOf(r, m); s != nil && !(s.P99 <= worst) {
			worst, what = s.P99, strings.ReplaceAll(strings.TrimSuffix(m, "_ms"), "_", " ")
		}
	}
	hint := "give the client its own cores (taskset), fewer streams per process (scale-out), or a quieter machine; docs/certificate.md"
	if r.Extra.ClientBound {
		c := result.CertCheck{Name: name, Verdict: result.CertFail, Value: worst, Unit: "ms", Hint: hint,
			Figure: "client_bound: " + clientBoundWhy(r)}
		return c
	}
	if math.IsNaN(worst) {
		return none(name, "no client delay measured")
	}
	if math.IsNaN(ref) {
		return none(name, fmt.Sprintf("%s p99 %.3g ms, with no figure to judge it against", what, worst))
	}
	c := judged(name, worst/ref, ClientWarn, ClientFail)
	c.Value, c.Unit, c.Limit = worst, "ms", ClientFail*ref
	c.Figure = fmt.Sprintf("%s p99 %.3g ms, %s of %s", what, worst, pct(worst/ref), refName)
	if c.Verdict != result.CertPass {
		c.Hint = hint
	}
	return c
}

// clientBoundWhy is the reason of the scenario's client_bound warning.
func clientBoundWhy(r *result.Scenario) string {
	for _, w := range r.Warnings {
		if why, ok := strings.CutPrefix(w, "client_bound: "); ok {
			why, _, _ = strings.Cut(why, ": figures may show")
			return why
		}
	}
	return "the client may have limited the figures"
}

// loopStalls judges the client's event-loop stalls (client_stall_p99_ms): above StallWarn or
// ClientWarn of the reference it warns, above ClientFail of the reference it fails, unless the
// kernel stamped the arrivals (read_delay_ms is measured): a stall then moves no figure but by a
// late read, and warns.
func loopStalls(r *result.Scenario, ref float64, refName string) result.CertCheck {
	const name = "loop_stalls"
	v, ok := valueOf(r, "client_stall_p99_ms")
	if !ok {
		return none(name, "not measured")
	}
	c := result.CertCheck{Name: name, Verdict: result.CertPass, Value: v, Unit: "ms", Limit: StallWarn}
	c.Figure = fmt.Sprintf("event-loop stalls p99 %.3g ms", v)
	if !math.IsNaN(ref) {
		c.Figure += fmt.Sprintf(", %s of %s", pct(v/ref), refName)
		c.Limit = ClientFail * ref
	}
	switch {
	case !math.IsNaN(ref) && v > ClientFail*ref:
		c.Verdict = result.CertFail
	case v > StallWarn || (!math.IsNaN(ref) && v > ClientWarn*ref):
		c.Verdict = result.CertWarn
	}
	if _, stamped := r.Metrics["read_delay_ms"]; stamped && c.Verdict == result.CertFail {
		// The kernel stamped the arrivals: a stall moves a figure only by a late read, which
		// client_delays judges.
		c.Verdict = result.CertWarn
		c.Figure += " (arrivals stamped by the kernel: only late reads move figures, see client_delays)"
	}
	if c.Verdict != result.CertPass {
		c.Hint = "the client's process did not get the CPU when it asked: a busy machine, a power-saving governor, GC; docs/certificate.md"
	}
	return c
}

// prefixCache judges the server's prefix-cache hit rate over the measured window (from its
// counters) with what it had served before it: a hit rate above CacheHit on prompts that repeat
// across runs, from a server that had served prompts before, is a warm cache (fail); on prompts of
// this run's own it is the workload's sharing (pass when it shares a prefix or turns, else warn).
func prefixCache(r *result.Scenario) result.CertCheck {
	const name = "prefix_cache"
	hit, ok := r.Extra.Resources.Get(cacheHit)
	if !ok || hit.N == 0 {
		return none(name, "the server exposes no prefix-cache counters")
	}
	prior, hasPrior := r.Extra.Resources.Get(cachePrior)
	used, _ := r.Extra.Resources.Get(cacheUsed)
	prompts, _ := r.Environment["prompts"].(string)
	c := result.CertCheck{Name: name, Verdict: result.CertPass, Value: hit.Last, Unit: "%", Limit: CacheHit}
	c.Figure = fmt.Sprintf("hit rate %.1f%% of prompt tokens during the run", hit.Last)
	if hasPrior && prior.N > 0 {
		c.Figure += fmt.Sprintf(", %.1f%% before it (over %.0f prompt tokens)", prior.Last, used.Last)
	}
	if prompts != "" {
		c.Figure += "; prompts " + prompts
	}
	if hit.Last <= CacheHit {
		return c
	}
	perRun := strings.HasPrefix(prompts, "per-run")
	shares, _ := r.Environment["prompts_share"].(bool)
	switch {
	case !perRun && used.Last > 0:
		c.Verdict = result.CertFail
		c.Hint = "a warm cache: this run's prompts repeat an earlier run's, and the server's cache held them; drop cache_key (a per-run prefix), or restart the server between runs"
	case perRun && shares:
		return c // the workload's own shared prefix or turns
	default:
		c.Verdict = result.CertWarn
		c.Hint = "the server's cache served this run's prompts: say whether that is measured (cache_key), or drop cache_key and file prompts for a per-run prefix"
	}
	return c
}

// outputLength judges the requests that stopped before the output length they asked for
// (output_short_rate).
func outputLength(r *result.Scenario) result.CertCheck {
	v, ok := valueOf(r, "output_short_rate")
	if !ok {
		return none("output_length", "no request asked for a length")
	}
	c := judged("output_length", v, ShortWarn, ShortFail)
	c.Unit, c.Figure = "ratio", pct(v)+" of requests stopped before the output tokens they asked for"
	if c.Verdict != result.CertPass {
		c.Hint = "ask for exact lengths (ignore_eos: true, --ignore-eos) where the server takes it (vLLM, SGLang, llama.cpp)"
	}
	return c
}

// usage judges the server's own output token counts against the client's (usage_mismatch_rate).
func usage(r *result.Scenario) result.CertCheck {
	v, ok := valueOf(r, "usage_mismatch_rate")
	if !ok {
		return none("usage", "the server reports no usage: output tokens are the client's count of content events")
	}
	c := judged("usage", v, 0, UsageFail)
	c.Unit, c.Figure = "ratio", pct(v)+" of requests whose usage.completion_tokens disagrees with the content events the client counted"
	if c.Verdict != result.CertPass {
		c.Hint = "the server's token counts are not what it streamed: per-token figures and throughput use them; check its tokenizer and its usage reporting"
	}
	return c
}

// errorShare judges the failed measured requests: they count against goodput and the SLOs'
// attainment (figures.Figures), not out of them.
func errorShare(r *result.Scenario) result.CertCheck {
	it := r.Iterations
	if it.Measured == 0 {
		return none("errors", "no measured request")
	}
	v := float64(it.Failed) / float64(it.Measured)
	c := judged("errors", v, 0, ErrorWarn)
	c.Unit = "ratio"
	c.Figure = fmt.Sprintf("%s of requests failed (%d of %d), counted against goodput and attainment", pct(v), it.Failed, it.Measured)
	if c.Verdict != result.CertPass {
		c.Hint = "read errors_by_kind and the server's log: an overloaded or misconfigured server's figures are of the requests it answered"
	}
	return c
}
