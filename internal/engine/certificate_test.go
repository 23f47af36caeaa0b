package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/result"
)

// certified runs one serving benchmark of load against a mockserver of cfg and returns its
// scenario, with a certificate.
func certified(t *testing.T, cfg mockserver.Config, workloadYAML, load string) *result.Scenario {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	url, err := mockserver.New(cfg).Start(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	scs := scenarios(t, fmt.Sprintf("name: cert\nsubject: {kind: openai, url: %q, model: mock, workload: %s}\nload: %s\n", url, workloadYAML, load))
	run := runAll(t, engine.New(), scs)
	sc := &run.Scenarios[0]
	if sc.Status != result.StatusOK {
		t.Fatalf("status %s: %s", sc.Status, sc.Error)
	}
	if sc.Extra.Certificate == nil {
		t.Fatalf("no certificate: %+v", sc.Extra)
	}
	return sc
}

func check(t *testing.T, sc *result.Scenario, name, want string) result.CertCheck {
	t.Helper()
	k, ok := sc.Extra.Certificate.Check(name)
	if !ok || k.Verdict != want {
		t.Errorf("%s: %+v, want %s (certificate %s)", name, k, want, sc.Extra.Certificate.Line())
	}
	return k
}

// TestCertificateServerStopsShort: a server that stops half its answers before the length asked
// fails output_length; one that answers every length passes it.
func TestCertificateServerStopsShort(t *testing.T) {
	// A server that takes no exact lengths (ignore_eos, min_tokens): its answers end where the model stops.
	cfg := mockserver.Config{TTFT: workload.Fixed(20), ITL: workload.Fixed(1), ShortRate: 0.5, RefuseExact: true, Seed: 1}
	sc := certified(t, cfg, "{output_tokens: 8}", "{mode: concurrency, concurrency: 2, warmup_iterations: 2, measurement_iterations: 60}")
	check(t, sc, "output_length", result.CertFail)
	if sc.Extra.Certificate.Verdict != result.CertFail {
		t.Errorf("certificate %s", sc.Extra.Certificate.Line())
	}
	cfg.ShortRate, cfg.RefuseExact = 0, false
	check(t, certified(t, cfg, "{output_tokens: 8}", "{mode: concurrency, concurrency: 2, warmup_iterations: 2, measurement_iterations: 60}"), "output_length", result.CertPass)
}

// TestCertificateUsageDisagrees: a server whose usage reports two tokens fewer than it streamed
// fails usage; an honest one passes it, and one without usage has nothing to judge.
func TestCertificateUsageDisagrees(t *testing.T) {
	cfg := mockserver.Config{TTFT: workload.Fixed(20), ITL: workload.Fixed(1), OutputTokens: workload.Fixed(8), UsageOffset: -2, Seed: 1}
	const load = "{mode: concurrency, concurrency: 2, warmup_iterations: 2, measurement_iterations: 40}"
	sc := certified(t, cfg, "{output_tokens: 8}", load)
	check(t, sc, "usage", result.CertFail)
	if v := sc.Metrics["usage_mismatch_rate"].Value; v == nil || *v != 1 {
		t.Errorf("usage_mismatch_rate %v, want 1", v)
	}
	cfg.UsageOffset = 0
	check(t, certified(t, cfg, "{output_tokens: 8}", load), "usage", result.CertPass)
	cfg.NoUsage = true
	check(t, certified(t, cfg, "{output_tokens: 8}", load), "usage", result.CertNone)
}

// TestCertificatePacedClient: an open loop asking 2,000 requests a second of a client allowed one
// in flight against 5 ms responses is paced by the client: its schedule lag is the figure, and
// client_delays fails.
func TestCertificatePacedClient(t *testing.T) {
	cfg := mockserver.Config{TTFT: workload.Fixed(5), ITL: workload.Fixed(1), OutputTokens: workload.Fixed(4), Seed: 1}
	sc := certified(t, cfg, "{output_tokens: 4}", "{mode: rate, rate: 2000, max_concurrency: 1, warmup_iterations: 2, measurement_iterations: 40}")
	k := check(t, sc, "client_delays", result.CertFail)
	if !strings.Contains(k.Figure, "schedule lag") {
		t.Errorf("client_delays figure %q, want the schedule lag named", k.Figure)
	}
}

// TestCertificateP99From50Requests: a p99 of 50 requests is marked, not printed as a fact: the
// samples check warns and ttft_ms's note says what the percentile needs.
func TestCertificateP99From50Requests(t *testing.T) {
	cfg := mockserver.Config{TTFT: workload.Fixed(20), ITL: workload.Fixed(1), OutputTokens: workload.Fixed(4), Seed: 1}
	sc := certified(t, cfg, "{output_tokens: 4}", "{mode: concurrency, concurrency: 1, warmup_iterations: 2, measurement_iterations: 50}")
	check(t, sc, "samples", result.CertWarn)
	if n := sc.Metrics["ttft_ms"].Note; !strings.Contains(n, "p99 needs 368") {
		t.Errorf("ttft_ms note %q, want the p99 marked", n)
	}
	// One stream of 50 requests: each starts as the last ends, all inside the window.
	check(t, sc, "steady_window", result.CertPass)
	check(t, sc, "errors", result.CertPass)
}

// TestCertificateErrorsCountAgainstGoodput: a server failing a fifth of its requests fails the
// errors check, and its failed requests count against goodput (below the rate of the requests
// that succeeded), not out of it.
func TestCertificateErrorsCountAgainstGoodput(t *testing.T) {
	cfg := mockserver.Config{TTFT: workload.Fixed(20), ITL: workload.Fixed(1), OutputTokens: workload.Fixed(4), ErrorRate: 0.2, Seed: 3}
	sc := certified(t, cfg, "{output_tokens: 4}", "{mode: concurrency, concurrency: 2, warmup_iterations: 2, measurement_iterations: 80, max_error_rate: 0.5, slo: {ttft_ms.p99: 100000}}")
	k := check(t, sc, "errors", result.CertFail)
	if !strings.Contains(k.Figure, "counted against goodput") || sc.Iterations.Failed == 0 {
		t.Errorf("errors %+v, failed %d", k, sc.Iterations.Failed)
	}
	// Attainment: an SLO no successful request misses does not hold with requests failed.
	if slo := sc.Extra.SLO; slo == nil || slo.Hold || !strings.Contains(strings.Join(slo.Failures, ";"), "failed requests") {
		t.Errorf("slo %+v, want it broken by the failed requests", slo)
	}
	// Goodput is of all measured requests: below the rate of all of them (requests_per_s is the
	// successful ones' over the window).
	good, ok := *sc.Metrics["goodput_rps"].Value, *sc.Metrics["requests_per_s"].Value
	if !(good < ok*float64(sc.Iterations.Measured)/float64(sc.Iterations.Measured-sc.Iterations.Failed)) || good <= 0 {
		t.Errorf("goodput %v with %d of %d failed, requests_per_s %v", good, sc.Iterations.Failed, sc.Iterations.Measured, ok)
	}
}
