package compare

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// value is a single-value metric (no samples), as the monitors' peaks and counts are.
func value(name string, x float64) result.Metric {
	m := result.NewMetric(name)
	m.Value = &x
	return m
}

// pairOf is a run of one scenario of subject kind with the given metrics.
func pairOf(id, kind string, gate []string, metrics map[string]result.Metric) *result.Run {
	return &result.Run{ID: id, Scenarios: []result.Scenario{{Benchmark: "b", Scenario: "default", Subject: kind, Gate: gate, Status: result.StatusOK, Metrics: metrics}}}
}

// The reproductions: only the scenario's primary metrics and budgets fail a comparison by
// default. Each case failed before gating (exit 3 on code nobody changed).
func TestOnlyPrimaryMetricsGate(t *testing.T) {
	cases := []struct {
		name     string
		kind     string
		old, new map[string]result.Metric
		gate     []string // Config.Gate (--gate)
		fails    bool
		verdict  string // of the row of metric
		metric   string
	}{
		// A 200 ns Go function: the harness's spawn and call cost moved with machine load.
		{"gofunc harness_latency_ms +50% is information", "gofunc",
			map[string]result.Metric{"latency_ms": sampled("latency_ms", 0.0002, 1), "harness_latency_ms": sampled("harness_latency_ms", 1.1, 2)},
			map[string]result.Metric{"latency_ms": sampled("latency_ms", 0.0002, 3), "harness_latency_ms": sampled("harness_latency_ms", 1.6, 4)},
			nil, false, Info, "harness_latency_ms"},
		// Seed 002's unchanged mobile_inference: peak_rss_mb +50.6% as a single value.
		{"exec peak_rss_mb +50% single value is information", "exec",
			map[string]result.Metric{"latency_ms": sampled("latency_ms", 10, 1), "peak_rss_mb": value("peak_rss_mb", 48)},
			map[string]result.Metric{"latency_ms": sampled("latency_ms", 10, 3), "peak_rss_mb": value("peak_rss_mb", 72.3)},
			nil, false, Info, "peak_rss_mb"},
		// Asked for: a gated single value is still untested, never a failure.
		{"gated peak_rss_mb single value is unverified, not failed", "exec",
			map[string]result.Metric{"latency_ms": sampled("latency_ms", 10, 1), "peak_rss_mb": value("peak_rss_mb", 48)},
			map[string]result.Metric{"latency_ms": sampled("latency_ms", 10, 3), "peak_rss_mb": value("peak_rss_mb", 72.3)},
			[]string{"peak_rss_mb"}, false, Unverified, "peak_rss_mb"},
		// Asked for with --gate: a sampled metric beyond its threshold fails.
		{"--gate harness_latency_ms fails on it", "gofunc",
			map[string]result.Metric{"latency_ms": sampled("latency_ms", 0.0002, 1), "harness_latency_ms": sampled("harness_latency_ms", 1.1, 2)},
			map[string]result.Metric{"latency_ms": sampled("latency_ms", 0.0002, 3), "harness_latency_ms": sampled("harness_latency_ms", 1.6, 4)},
			[]string{"harness_latency_ms"}, true, Regression, "harness_latency_ms"},
		// Seed 000: result_size, a count, went 5,000 → 15,000: neither gated nor lower-is-better.
		{"worker result_size is a count, not gated", "worker",
			map[string]result.Metric{"latency_ms": sampled("latency_ms", 10, 1), "result_size": sampled("result_size", 5000, 2)},
			map[string]result.Metric{"latency_ms": sampled("latency_ms", 10, 3), "result_size": sampled("result_size", 15000, 4)},
			nil, false, Changed, "result_size"},
		// The primary metric itself still fails.
		{"exec latency_ms +30% fails", "exec",
			map[string]result.Metric{"latency_ms": sampled("latency_ms", 10, 1), "cpu_pct": sampled("cpu_pct", 50, 2)},
			map[string]result.Metric{"latency_ms": sampled("latency_ms", 13, 3), "cpu_pct": sampled("cpu_pct", 50, 4)},
			nil, true, Regression, "latency_ms"},
		// CPU is information by default.
		{"exec cpu_pct +60% is information", "exec",
			map[string]result.Metric{"latency_ms": sampled("latency_ms", 10, 1), "cpu_pct": sampled("cpu_pct", 50, 2)},
			map[string]result.Metric{"latency_ms": sampled("latency_ms", 10, 3), "cpu_pct": sampled("cpu_pct", 80, 4)},
			nil, false, Info, "cpu_pct"},
		// Serving: output throughput is primary, requests/s is not.
		{"openai output_tokens_per_s -20% fails", "openai",
			map[string]result.Metric{"ttft_ms": sampled("ttft_ms", 50, 1), "output_tokens_per_s": sampled("output_tokens_per_s", 1000, 2)},
			map[string]result.Metric{"ttft_ms": sampled("ttft_ms", 50, 3), "output_tokens_per_s": sampled("output_tokens_per_s", 800, 4)},
			nil, true, Regression, "output_tokens_per_s"},
	}
	for _, c := range cases {
		rep := Runs(pairOf("old", c.kind, nil, c.old), pairOf("new", c.kind, nil, c.new), Config{Gate: c.gate})
		i := slices.IndexFunc(rep.Rows, func(r Row) bool { return r.Metric == c.metric })
		if i < 0 {
			t.Fatalf("%s: no row %s in %+v", c.name, c.metric, rep.Rows)
		}
		if got := rep.Rows[i].Verdict; got != c.verdict || rep.Failed() != c.fails {
			t.Errorf("%s: verdict %s, failed %v; want %s, %v (row %+v)", c.name, got, rep.Failed(), c.verdict, c.fails, rep.Rows[i])
		}
	}
}

// A definition's gate: list replaces the subject kind's defaults.
func TestDefinitionGateReplacesDefaults(t *testing.T) {
	old := map[string]result.Metric{"latency_ms": sampled("latency_ms", 10, 1), "accuracy": sampled("accuracy", 0.9, 2)}
	nw := map[string]result.Metric{"latency_ms": sampled("latency_ms", 13, 3), "accuracy": sampled("accuracy", 0.6, 4)}
	rep := Runs(pairOf("old", "worker", []string{"accuracy"}, old), pairOf("new", "worker", []string{"accuracy"}, nw), Config{})
	for _, r := range rep.Rows {
		want := r.Metric == "accuracy"
		if r.Gated != want || r.Failed() != want {
			t.Errorf("gate: [accuracy]: row %s gated %v failed %v, want %v", r.Metric, r.Gated, r.Failed(), want)
		}
	}
	if rep.Regressions != 1 {
		t.Errorf("regressions %d, want 1 (accuracy)", rep.Regressions)
	}
}

func TestDefaultGate(t *testing.T) {
	ms := func(names ...string) map[string]result.Metric {
		m := map[string]result.Metric{}
		for _, n := range names {
			m[n] = value(n, 1)
		}
		return m
	}
	cases := []struct {
		kind    string
		metrics map[string]result.Metric
		want    []string
	}{
		{"exec", ms("latency_ms", "peak_rss_mb", "harness_latency_ms"), []string{"latency_ms"}},
		{"gofunc", ms("latency_ms", "harness_latency_ms"), []string{"latency_ms"}},
		{"mock", ms("latency_ms", "memory_mb"), []string{"latency_ms"}},
		{"worker", ms("latency_ms", "memory_mb", "execution_time"), []string{"latency_ms"}},
		{"worker", ms("latency_ms", "tokens_per_s", "ttft_ms"), []string{"tokens_per_s", "ttft_ms"}}, // an LLM in a worker
		{"openai", ms("ttft_ms", "itl_ms", "output_tokens_per_s", "e2e_ms", "requests_per_s"), []string{"ttft_ms", "itl_ms", "output_tokens_per_s"}},
		{"openai", ms("e2e_ms", "requests_per_s"), []string{"e2e_ms"}}, // not streamed: no TTFT
		{"gobench", ms("latency_ms", "allocs_per_op"), []string{"latency_ms"}},
	}
	for _, c := range cases {
		s := &result.Scenario{Subject: c.kind, Metrics: c.metrics}
		if got := defaultGate(s); !slices.Equal(got, c.want) {
			t.Errorf("defaultGate(%s with %d metrics) = %v, want %v", c.kind, len(c.metrics), got, c.want)
		}
	}
}

// With enough stored runs, a gated metric's threshold comes from their run-to-run noise and the
// row says from how many; an override still wins, and too few runs keep the default.
func TestNoiseAwareThreshold(t *testing.T) {
	quiet := make([]float64, 12)
	for i := range quiet {
		quiet[i] = 10 * (1 + 0.01*float64(i%3-1)) // ±1% between runs
	}
	hist := func(s *result.Scenario, metric string) []float64 {
		if metric == "latency_ms" {
			return quiet
		}
		return nil
	}
	old := map[string]result.Metric{"latency_ms": sampled("latency_ms", 10, 1), "cpu_pct": sampled("cpu_pct", 50, 2)}
	nw := map[string]result.Metric{"latency_ms": sampled("latency_ms", 11, 3), "cpu_pct": sampled("cpu_pct", 50, 4)}
	rep := Runs(pairOf("old", "exec", nil, old), pairOf("new", "exec", nil, nw), Config{History: hist})
	r := rep.Rows[slices.IndexFunc(rep.Rows, func(r Row) bool { return r.Metric == "latency_ms" })]
	if r.ThresholdRuns != 12 || r.Threshold >= 10 || r.Threshold < 1 || r.Verdict != Regression {
		t.Errorf("latency_ms +10%% with 12 quiet stored runs: threshold %.1f%% from %d runs, verdict %s; want below 10%% from 12 runs and a regression (the default 15%% would not see it)", r.Threshold, r.ThresholdRuns, r.Verdict)
	}
	c := rep.Rows[slices.IndexFunc(rep.Rows, func(r Row) bool { return r.Metric == "cpu_pct" })]
	if c.ThresholdRuns != 0 {
		t.Errorf("cpu_pct (not gated) got a noise threshold from %d runs", c.ThresholdRuns)
	}
	// An override wins.
	var th Thresholds
	th.Set("latency_ms=20")
	rep = Runs(pairOf("old", "exec", nil, old), pairOf("new", "exec", nil, nw), Config{History: hist, Thresholds: th})
	lat := func(rep *Report) Row {
		return rep.Rows[slices.IndexFunc(rep.Rows, func(r Row) bool { return r.Metric == "latency_ms" })]
	}
	if r := lat(rep); r.Threshold != 20 || r.ThresholdRuns != 0 {
		t.Errorf("--threshold latency_ms=20 with history: threshold %.1f from %d runs, want 20 from none", r.Threshold, r.ThresholdRuns)
	}
	// Too few runs: the default.
	few := func(*result.Scenario, string) []float64 { return quiet[:5] }
	rep = Runs(pairOf("old", "exec", nil, old), pairOf("new", "exec", nil, nw), Config{History: few})
	if r := lat(rep); r.Threshold != defaultThresholds[Latency] || r.ThresholdRuns != 0 {
		t.Errorf("5 stored runs: threshold %.1f from %d runs, want the default", r.Threshold, r.ThresholdRuns)
	}
}

// NoiseOf: a noisy history gives a wide threshold, a real shift in the history is not noise.
func TestNoiseOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	noisy := make([]float64, 30)
	for i := range noisy {
		noisy[i] = 10 * (1 + 0.10*rng.NormFloat64())
	}
	n, ok := noiseOf(noisy, 0)
	if !ok || n.ThresholdPct < 20 {
		t.Errorf("CV 10%% between runs: %+v, want a threshold above 20%%", n)
	}
	shifted := make([]float64, 20)
	for i := range shifted {
		shifted[i] = 10 * (1 + 0.005*rng.NormFloat64())
		if i >= 10 {
			shifted[i] *= 1.3
		}
	}
	if n, ok := noiseOf(shifted, 0); !ok || n.ThresholdPct > 5 {
		t.Errorf("quiet history with one +30%% shift: %+v, want a threshold below 5%%", n)
	}
	if _, ok := noiseOf([]float64{1, 2, 3}, 0); ok {
		t.Error("3 runs: a noise threshold, want none")
	}
}

// A metric of unknown direction is never gated, even when --gate names it (or all).
func TestUnknownDirectionNeverGates(t *testing.T) {
	old := map[string]result.Metric{"latency_ms": sampled("latency_ms", 10, 1), "widgets": sampled("widgets", 100, 2)}
	nw := map[string]result.Metric{"latency_ms": sampled("latency_ms", 10, 3), "widgets": sampled("widgets", 300, 4)}
	for _, gate := range [][]string{{"widgets"}, {gateAll}} {
		rep := Runs(pairOf("old", "exec", nil, old), pairOf("new", "exec", nil, nw), Config{Gate: gate})
		i := slices.IndexFunc(rep.Rows, func(r Row) bool { return r.Metric == "widgets" })
		if rep.Failed() || rep.Rows[i].Verdict != Changed {
			t.Errorf("--gate %v: widgets 100 → 300 with no direction: failed %v, verdict %s; want changed, not failed", gate, rep.Failed(), rep.Rows[i].Verdict)
		}
	}
}
