// Package certify judges a serving scenario's measurement: whether its figures are the server's
// or the benchmark's. Scenario reads a finished result (its metrics, warnings and extra
// sections) and what the load kept beside it (Evidence), and returns a certificate of checks,
// each pass, warn or fail with the figure it is read from (docs/certificate.md): the client's own
// delays and event-loop stalls, the server's prefix cache, the output lengths asked and
// delivered, the server's token counts, the errors, the steady-state window, the requests behind
// each percentile, and the GPU's clocks.
package certify

import (
	"fmt"
	"math"
	"strings"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// Evidence is what a serving load kept beside its result that the checks read: how the load was
// driven, its steady window, and the per-request figures in the order the requests ended.
type Evidence struct {
	// OpenLoop is true for loads that send on a schedule (mode rate, sweep steps, trace): their
	// schedule lag delays requests.
	OpenLoop bool
	// Steady is the steady-state window found from the requests (figures.Figures.Steady); nil
	// when it could not be found.
	Steady *figures.Steady
	// Ordered holds, by metric (ttft_ms, tpot_ms, e2e_ms), every measured request's figure in
	// the order it was taken; a metric whose samples were not all kept is absent, and its
	// percentiles are judged by their count alone.
	Ordered map[string][]float64
}

// EvidenceOf is the evidence a serving load's figures hold: the steady window at target
// requests in flight (none when steady is false: a sweep's or a capacity search's steps each
// have their own level), and every measured request's ttft_ms, tpot_ms and e2e_ms in the order
// taken, where all were kept. The engine's collector and an import read theirs through it.
func EvidenceOf(f *figures.Figures, openLoop bool, target int, steady bool) Evidence {
	ev := Evidence{OpenLoop: openLoop, Ordered: map[string][]float64{}}
	if steady {
		if st, ok := f.Steady(target); ok {
			ev.Steady = &st
		}
	}
	f.Each(func(name string, d *stats.Dist) {
		switch name {
		case "ttft_ms", "tpot_ms", "e2e_ms":
			if d.Exact() {
				ev.Ordered[name] = d.Samples()
			}
		}
	})
	return ev
}

// Thresholds of the checks (docs/certificate.md says each).
const (
	// ClientFail and ClientWarn are the shares of the reference (the tightest SLO limit, else the
	// TTFT p50) that the client's own delay p99 may reach before the check fails or warns:
	// capacity.ClientShare, and a tenth of it.
	ClientFail = 0.1
	ClientWarn = 0.01
	// StallWarn is the event-loop stall p99 above which loop_stalls warns, in ms (the serving
	// load's client_bound bound when arrivals are read times).
	StallWarn = 1.0
	// CacheHit is the prefix-cache hit rate, in percent of prompt tokens, above which the
	// server's cache served the run's prompts.
	CacheHit = 5.0
	// ShortWarn and ShortFail are the shares of requests stopping short of the length asked.
	ShortWarn = 0.01
	ShortFail = 0.05
	// UsageFail is the share of requests whose usage disagrees with the client's count.
	UsageFail = 0.01
	// ErrorWarn is the error share above which errors fails (any error warns).
	ErrorWarn = 0.01
	// SteadyWarn and SteadyFail are the shares of measured requests started outside the steady
	// window (ramp-up and drain).
	SteadyWarn = 0.10
	SteadyFail = 0.50
	// ThrottleFail is the share of GPU samples with clocks lowered by heat or power above which
	// gpu_clocks fails (any warns); HotC the temperature that warns.
	ThrottleFail = 0.05
	HotC         = 85.0
)

// Scenario returns r's certificate, from its result and ev, and notes each percentile of a
// metric whose requests do not suffice for it in that metric's note. r is a serving scenario's.
func Scenario(r *result.Scenario, ev Evidence) *result.Certificate {
	ref, refName := reference(r)
	checks := []result.CertCheck{
		clientDelays(r, ev, ref, refName),
		loopStalls(r, ref, refName),
		prefixCache(r),
		outputLength(r),
		usage(r),
		errorShare(r),
		steadyWindow(ev),
		samples(r, ev),
		gpuClocks(r),
	}
	return result.NewCertificate(checks)
}

// reference is the figure the client's delays are judged against: the tightest SLO limit in ms,
// else the TTFT p50 (the figure's own size), else the e2e p50; NaN without any.
func reference(r *result.Scenario) (ms float64, name string) {
	ms = math.Inf(1)
	if r.Extra.SLO != nil {
		for k, v := range r.Extra.SLO.Objectives {
			metric, _, _ := strings.Cut(k, ".")
			if strings.HasSuffix(metric, "_ms") && v > 0 && v < ms {
				ms, name = v, "the SLO "+k+" ≤ "+fmt.Sprintf("%.4g ms", v)
			}
		}
	}
	if name != "" {
		return ms, name
	}
	for _, m := range []string{"ttft_ms", "e2e_ms"} {
		if s := summaryOf(r, m); s != nil && s.Median > 0 {
			return s.Median, fmt.Sprintf("the %s p50 %.4g ms", strings.TrimSuffix(m, "_ms"), s.Median)
		}
	}
	return math.NaN(), ""
}

func summaryOf(r *result.Scenario, name string) *stats.Summary {
	m, ok := r.Metrics[name]
	if !ok || m.Summary == nil || m.Summary.N == 0 {
		return nil
	}
	return m.Summary
}

func valueOf(r *result.Scenario, name string) (float64, bool) {
	m, ok := r.Metrics[name]
	if !ok || m.Value == nil || math.IsNaN(*m.Value) {
		return 0, false
	}
	return *m.Value, true
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
