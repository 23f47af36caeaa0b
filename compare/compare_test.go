package compare

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// lognormal draws n samples with the given median and coefficient of variation.
func lognormal(rng *rand.Rand, n int, median, cv float64) []float64 {
	sigma := math.Sqrt(math.Log(1 + cv*cv))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = median * math.Exp(sigma*rng.NormFloat64())
	}
	return xs
}

func run(id string, scenarios ...result.Scenario) *result.Run {
	r := &result.Run{Schema: result.Schema, ID: id, StartedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Scenarios: scenarios}
	r.Tally()
	return r
}

func scenario(bench string, params map[string]any, metrics map[string][]float64) result.Scenario {
	ms := map[string]result.Metric{}
	for k, xs := range metrics {
		ms[k] = result.SampleMetric(k, xs)
	}
	return result.Scenario{Benchmark: bench, Scenario: fmt.Sprint(params), Params: params, Status: result.StatusOK, Metrics: ms}
}

func TestVerdicts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	base := lognormal(rng, 30, 10, 0.05)
	scale := func(xs []float64, f float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = x * f
		}
		return out
	}
	cases := []struct {
		name   string
		metric string
		factor float64
		want   string
	}{
		{"latency +30% is a regression", "latency_ms", 1.3, Regression},
		{"latency +8% is worse but within 15%", "latency_ms", 1.08, Worse},
		{"latency -30% is an improvement", "latency_ms", 0.7, Improvement},
		{"latency unchanged", "latency_ms", 1.0, Unchanged},
		{"throughput -20% is a regression (higher is better)", "throughput_ips", 0.8, Regression},
		{"throughput +20% is an improvement", "throughput_ips", 1.2, Improvement},
		{"memory +18% is within 20%", "memory_mb", 1.18, Worse},
		{"memory +25% is a regression", "memory_mb", 1.25, Regression},
	}
	for _, c := range cases {
		old := run("a", scenario("m", map[string]any{"b": 1}, map[string][]float64{c.metric: base}))
		new := run("b", scenario("m", map[string]any{"b": 1}, map[string][]float64{c.metric: scale(lognormal(rng, 30, 10, 0.05), c.factor)}))
		rep := Runs(old, new, Config{Gate: []string{c.metric}}) // verdicts as gated metrics get them
		if len(rep.Rows) != 1 {
			t.Fatalf("%s: %d rows, want 1", c.name, len(rep.Rows))
		}
		if got := rep.Rows[0].Verdict; got != c.want {
			t.Errorf("%s: verdict %s, want %s (row %+v)", c.name, got, c.want, rep.Rows[0])
		}
		if rep.Failed() != (c.want == Regression) {
			t.Errorf("%s: Failed() = %v", c.name, rep.Failed())
		}
	}
}

func TestMatchingAndWarnings(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	old := run("a",
		scenario("m", map[string]any{"b": 1, "d": "cpu"}, map[string][]float64{"latency_ms": lognormal(rng, 5, 10, 0.05)}),
		scenario("gone", nil, map[string][]float64{"latency_ms": lognormal(rng, 30, 10, 0.05)}))
	old.Environment = map[string]any{"cpu": map[string]any{"model": "EPYC", "cores": 16}, "gpus": []any{map[string]any{"name": "A100", "driver": "550"}}}
	// Same params in another order match; the scenario name does not matter.
	sc := scenario("m", map[string]any{"d": "cpu", "b": 1}, map[string][]float64{"latency_ms": lognormal(rng, 5, 10, 0.05)})
	sc.Scenario = "renamed"
	new := run("b", sc, scenario("added", nil, map[string][]float64{"latency_ms": lognormal(rng, 30, 10, 0.05)}))
	new.Environment = map[string]any{"cpu": map[string]any{"model": "EPYC", "cores": 16}, "gpus": []any{map[string]any{"name": "A100", "driver": "560"}}}
	rep := Runs(old, new, Config{})
	if len(rep.Rows) != 1 || rep.Rows[0].Benchmark != "m" {
		t.Fatalf("rows %+v, want the one matched scenario", rep.Rows)
	}
	if len(rep.OnlyOld) != 1 || len(rep.OnlyNew) != 1 {
		t.Errorf("OnlyOld %v OnlyNew %v, want gone and added", rep.OnlyOld, rep.OnlyNew)
	}
	if !strings.Contains(strings.Join(rep.Rows[0].Warnings, "\n"), "too few samples") {
		t.Errorf("row warnings %q, want a too-few-samples warning for n=5", rep.Rows[0].Warnings)
	}
	if w := strings.Join(rep.Warnings, "\n"); !strings.Contains(w, "different GPU driver: 550 (old) vs 560 (new)") || strings.Contains(w, "different CPU") {
		t.Errorf("report warnings %q, want only the GPU driver difference", rep.Warnings)
	}
}

func TestTailRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	old := lognormal(rng, 600, 10, 0.1)
	new := lognormal(rng, 600, 10, 0.1)
	for i := range new { // same median, a slow tail
		if i%20 == 0 {
			new[i] *= 1.8
		}
	}
	// Asked for (--gate latency_ms gates its tails): the tail regresses, the median does not.
	rep := Runs(run("a", scenario("m", nil, map[string][]float64{"latency_ms": old})), run("b", scenario("m", nil, map[string][]float64{"latency_ms": new})), Config{Gate: []string{"latency_ms"}})
	got := map[string]string{}
	for _, r := range rep.Rows {
		got[r.Metric] = r.Verdict
	}
	if got["latency_ms.p99"] != Regression || got["latency_ms"] == Regression {
		t.Errorf("--gate latency_ms: verdicts %v: want the p99 tail to regress and the median not", got)
	}
	// By default a function's or model's tails are information.
	rep = Runs(run("a", scenario("m", nil, map[string][]float64{"latency_ms": old})), run("b", scenario("m", nil, map[string][]float64{"latency_ms": new})), Config{Bootstrap: stats.Bootstrap{Resamples: 400}})
	if rep.Failed() {
		t.Errorf("default gate: a slow tail failed the comparison (rows %+v)", rep.Rows)
	}
}

func TestBudgets(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	sc := scenario("mobile", nil, map[string][]float64{"latency_ms": lognormal(rng, 50, 100, 0.05), "memory_mb": {600}})
	sc.Budgets = map[string]string{"latency_ms.p95": "<= 90"}
	file := &BudgetFile{Budgets: map[string]BudgetLimits{"mobile": {MaxMemoryMB: ptr(512.0)}, "mobile/*": {MaxLatencyMS: ptr(250.0)}, "other": {MaxMemoryMB: ptr(1.0)}}}
	checks := checkBudgets(&sc, file)
	byMetric := map[string]BudgetCheck{}
	for _, c := range checks {
		byMetric[c.Source+":"+c.Metric] = c
	}
	if c := byMetric["definition:latency_ms.p95"]; c.OK || !c.Measured {
		t.Errorf("definition budget p95 <= 90 with a median of 100: %+v, want exceeded", c)
	}
	if c := byMetric[budgetFileName+":memory_mb.max"]; c.OK || c.Actual != 600 {
		t.Errorf("file budget memory 512 with 600: %+v, want exceeded", c)
	}
	if c := byMetric[budgetFileName+":latency_ms.p95"]; !c.OK {
		t.Errorf("file budget latency 250: %+v, want ok", c)
	}
	if len(checks) != 3 {
		t.Errorf("%d checks, want 3 (the 'other' entry does not apply): %+v", len(checks), checks)
	}
	rep := Runs(run("a", sc), run("b", sc), Config{Budgets: file})
	if rep.BudgetsExceeded != 2 || !rep.Failed() {
		t.Errorf("BudgetsExceeded = %d, Failed = %v; want 2, true", rep.BudgetsExceeded, rep.Failed())
	}
}

func ptr[T any](v T) *T { return &v }

func TestThresholds(t *testing.T) {
	var th Thresholds
	for _, s := range []string{"latency=10", "ttft_ms=5", "resnet:latency_ms.p95=30", "resnet:memory=50"} {
		if err := th.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		bench, metric string
		want          float64
	}{
		{"bert", "latency_ms", 10},       // kind override
		{"bert", "ttft_ms", 5},           // metric override
		{"bert", "ttft_ms.p95", 5},       // falls back on the metric
		{"resnet", "latency_ms.p95", 30}, // benchmark and metric
		{"resnet", "latency_ms", 10},
		{"resnet", "memory_mb", 50},      // benchmark and kind
		{"bert", "memory_mb", 20},        // default
		{"bert", "throughput_ips", 10},   // default
		{"bert", "client_cpu_cores", 25}, // default for cpu
	}
	for _, c := range cases {
		if got := th.For(c.bench, c.metric); got != c.want {
			t.Errorf("For(%s, %s) = %v, want %v", c.bench, c.metric, got, c.want)
		}
	}
	if err := th.Set("latency"); err == nil {
		t.Error("Set(latency) succeeded, want an error")
	}
}

// The bars of the issue, on seeded synthetic data: lognormal samples, CV 5%, n = 30.
func TestFalseRegressionsAA(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 6))
	const trials = 1000
	false_ := 0
	for i := 0; i < trials; i++ {
		m := func() map[string][]float64 {
			return map[string][]float64{
				"latency_ms": lognormal(rng, 30, 10, 0.05), "ttft_ms": lognormal(rng, 30, 3, 0.05),
				"throughput_ips": lognormal(rng, 30, 100, 0.05), "memory_mb": lognormal(rng, 30, 500, 0.05),
				"client_cpu_cores": lognormal(rng, 30, 1.5, 0.05),
			}
		}
		rep := Runs(run("a", scenario("m", nil, m())), run("b", scenario("m", nil, m())), Config{})
		if rep.Failed() {
			false_++
		}
	}
	t.Logf("A/A: %d of %d comparisons (5 metrics each) reported a regression", false_, trials)
	if false_ > trials/100 {
		t.Errorf("A/A: %d of %d comparisons reported a regression, want at most 1%%", false_, trials)
	}
}

func TestPowerTenPercent(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 7))
	const trials = 1000
	significant, regressions := 0, 0
	for i := 0; i < trials; i++ {
		old := run("a", scenario("m", nil, map[string][]float64{"latency_ms": lognormal(rng, 30, 10, 0.05)}))
		new := run("b", scenario("m", nil, map[string][]float64{"latency_ms": lognormal(rng, 30, 11, 0.05)}))
		// Default settings: the shift is detected (significant and worse)...
		if r := Runs(old, new, Config{}).Rows[0]; r.Significant && r.Verdict == Worse {
			significant++
		}
		// ...and with a threshold below the shift it is a regression.
		var th Thresholds
		_ = th.Set("latency=5")
		if Runs(old, new, Config{Thresholds: th}).Failed() {
			regressions++
		}
	}
	t.Logf("+10%% shift: detected %d/%d at defaults, regression %d/%d with a 5%% threshold", significant, trials, regressions, trials)
	if significant < trials*95/100 || regressions < trials*95/100 {
		t.Errorf("+10%% shift: detected %d, regression %d of %d; want at least 95%% each", significant, regressions, trials)
	}
}

// On the same samples exported in the Go benchmark format and read back with benchfmt, the
// significant / not-significant split matches benchstat's (benchmath, alpha 0.05).
func TestMatchesBenchstat(t *testing.T) {
	rng := rand.New(rand.NewPCG(44, 8))
	const trials = 1000
	mismatch, sig := 0, 0
	for i := 0; i < trials; i++ {
		shift := []float64{1, 1.01, 1.02, 1.03, 1.05}[i%5] // a mix of null and small shifts
		old := run("a", scenario("m", nil, map[string][]float64{"latency_ms": lognormal(rng, 30, 10, 0.05)}))
		new := run("b", scenario("m", nil, map[string][]float64{"latency_ms": lognormal(rng, 30, 10*shift, 0.05)}))
		ours := Runs(old, new, Config{}).Rows[0].Significant
		theirs := benchstatSignificant(t, old, new)
		if ours != theirs {
			mismatch++
		}
		if theirs {
			sig++
		}
	}
	t.Logf("benchstat: %d of %d significant; %d mismatches", sig, trials, mismatch)
	if mismatch != 0 {
		t.Errorf("%d of %d comparisons disagree with benchstat on significance", mismatch, trials)
	}
}

func benchstatSignificant(t *testing.T, old, new *result.Run) bool {
	t.Helper()
	read := func(r *result.Run) *benchmath.Sample {
		var buf bytes.Buffer
		if err := result.WriteGoBench(&buf, r); err != nil {
			t.Fatal(err)
		}
		br := benchfmt.NewReader(&buf, r.ID)
		var xs []float64
		for br.Scan() {
			if res, ok := br.Result().(*benchfmt.Result); ok {
				if v, ok := res.Value("sec/op"); ok {
					xs = append(xs, v)
				}
			}
		}
		return benchmath.NewSample(xs, &benchmath.DefaultThresholds)
	}
	c := benchmath.AssumeNothing.Compare(read(old), read(new))
	return !(c.P > c.Alpha) // benchstat prints "~" when P > Alpha
}

func TestBenjaminiHochbergAcrossRows(t *testing.T) {
	// 20 scenarios: one real +40% regression with p tiny, the rest A/A; the family adjustment
	// keeps the real one and its q is at least its p.
	rng := rand.New(rand.NewPCG(5, 5))
	var olds, news []result.Scenario
	for i := 0; i < 20; i++ {
		f := 1.0
		if i == 0 {
			f = 1.4
		}
		p := map[string]any{"i": i}
		olds = append(olds, scenario("m", p, map[string][]float64{"latency_ms": lognormal(rng, 30, 10, 0.05)}))
		news = append(news, scenario("m", p, map[string][]float64{"latency_ms": lognormal(rng, 30, 10*f, 0.05)}))
	}
	rep := Runs(run("a", olds...), run("b", news...), Config{})
	if rep.Regressions != 1 || rep.Rows[0].Verdict != Regression {
		t.Errorf("regressions %d (first row %s), want exactly the +40%% one", rep.Regressions, rep.Rows[0].Verdict)
	}
	for _, r := range rep.Rows {
		if r.Q < r.P {
			t.Errorf("row %s: q %v < p %v", r.ID(), r.Q, r.P)
		}
	}
	_ = stats.DefaultAlpha
}

func TestSingleValues(t *testing.T) {
	cases := []struct {
		name     string
		metric   string
		old, new float64
		want     string
		fails    bool
	}{
		// Failed before: a single peak beyond its threshold was a regression, and an exec
		// subject's peak moves by +20-50% between unchanged runs.
		{"peak memory +25% without samples is untested, not failed", "memory_mb", 100, 125, Unverified, false},
		{"throughput -20% is untested and does not fail", "throughput_ips", 100, 80, Unverified, false},
		{"load time +5% is within the threshold", "load_time_ms", 100, 105, Unknown, false},
		{"a zero old value has no delta", "error_rate", 0, 0.1, Unknown, false},
	}
	for _, c := range cases {
		old := run("a", scenario("m", nil, map[string][]float64{c.metric: {c.old}}))
		new := run("b", scenario("m", nil, map[string][]float64{c.metric: {c.new}}))
		rep := Runs(old, new, Config{Gate: []string{gateAll}}) // gated: even so, no failure
		if got := rep.Rows[0].Verdict; got != c.want || rep.Failed() != c.fails {
			t.Errorf("%s: verdict %s failed %v, want %s %v", c.name, got, rep.Failed(), c.want, c.fails)
		}
	}
}

// A gated change beyond its threshold measured with too few samples to be tested (one a side;
// two or three, with which Mann-Whitney can never reach alpha 0.05) is undecided: the report
// says so, with the samples and how many are needed, and a CI job must not read it as a pass.
// Before, a 10× slower run with one sample a side was "unverified" at worst, exit 0 without
// --strict; with two or three samples a side it was "unchanged".
func TestTooFewSamplesUndecided(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new []float64
		tooFew   bool
		verdict  string
	}{
		{"one a side, 10× slower", []float64{10}, []float64{100}, true, Unverified},
		{"two a side, 10× slower", []float64{10, 10.1}, []float64{100, 101}, true, Unverified},
		{"three a side, 10× slower", []float64{10, 10.1, 10.2}, []float64{100, 101, 102}, true, Unverified},
		{"four a side, 10× slower: tested", []float64{10, 10.1, 10.2, 10.3}, []float64{100, 101, 102, 103}, false, Regression},
		{"one a side, unchanged", []float64{10}, []float64{10.1}, false, Unknown},
		{"two a side, 10× faster", []float64{10, 10.1}, []float64{1, 1.01}, false, Unchanged},
	} {
		// As the engine records a run of one iteration: its one sample, and its summary.
		sampled := func(id string, xs []float64) *result.Run {
			s := scenario("b", nil, nil)
			m := result.NewMetric("latency_ms")
			sum, _ := stats.Summarize(xs)
			m.Summary, m.Samples = &sum, xs
			s.Metrics["latency_ms"] = m
			return run(id, s)
		}
		rep := Runs(sampled("a", tc.old), sampled("b", tc.new), Config{})
		var row *Row
		for i := range rep.Rows {
			if rep.Rows[i].Metric == "latency_ms" {
				row = &rep.Rows[i]
			}
		}
		if row == nil || row.Verdict != tc.verdict || row.TooFew != tc.tooFew {
			t.Errorf("%s: row %+v, want verdict %s, too few %v", tc.name, row, tc.verdict, tc.tooFew)
			continue
		}
		why := rep.Undecided()
		if tc.tooFew != (why != "") || tc.tooFew && (rep.TooFew != 1 || rep.Need != 4 || !strings.Contains(why, "too few samples to test") || !strings.Contains(why, "at least 4 samples a side")) {
			t.Errorf("%s: undecided %q (too few %d, need %d)", tc.name, why, rep.TooFew, rep.Need)
		}
	}
	if n := NeedSamples(0.01); n != 5 {
		t.Errorf("samples needed at alpha 0.01: %d, want 5", n)
	}
}
