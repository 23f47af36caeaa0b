package compare

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// thresholdsFileName is the thresholds file the command line reads from the project directory.
const thresholdsFileName = "benchmark_thresholds.json"

func valueMetric(name string, v float64) result.Metric {
	m := result.NewMetric(name)
	m.Value = &v
	return m
}

// Every key of the seed's performance-budget.yml bounds a metric inferbench measures, key by key.
// max_cpu_percent failed before: it named "cpu_percent", which nothing measures, and passed as
// "not measured" while cpu_pct was 99%.
func TestBudgetFileKeysMapToMetrics(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	model := scenario("mobile_inference", nil, map[string][]float64{"latency_ms": lognormal(rng, 200, 300, 0.05)})
	model.Metrics["memory_mb"] = valueMetric("memory_mb", 600)
	model.Metrics["cpu_pct"] = valueMetric("cpu_pct", 99)
	llm := scenario("chat", nil, map[string][]float64{"e2e_ms": lognormal(rng, 200, 300, 0.05)})
	// A command reports no memory_mb: the monitors' peak RSS is its memory (failed before:
	// "memory_mb.max <= 512: not measured", and the budget passed).
	command := scenario("cmd", nil, map[string][]float64{"latency_ms": lognormal(rng, 200, 10, 0.05)})
	command.Metrics["peak_rss_mb"] = valueMetric("peak_rss_mb", 700)
	dir := t.TempDir()
	file := filepath.Join(dir, budgetFileName)
	os.WriteFile(file, []byte("budgets:\n  mobile_inference:\n    max_latency_ms: 250\n    max_memory_mb: 512\n    max_cpu_percent: 70\n  chat:\n    max_latency_ms: 250\n  cmd:\n    max_memory_mb: 512\n"), 0o644)
	bf, err := LoadBudgetFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key    string
		sc     *result.Scenario
		metric string
		actual float64
	}{
		{"max_latency_ms", &model, "latency_ms.p95", model.Metrics["latency_ms"].Summary.P95},
		{"max_latency_ms (LLM)", &llm, "e2e_ms.p95", llm.Metrics["e2e_ms"].Summary.P95},
		{"max_memory_mb", &model, "memory_mb.max", 600},
		{"max_memory_mb (monitors)", &command, "peak_rss_mb", 700},
		{"max_cpu_percent", &model, "cpu_pct", 99},
	} {
		var got *BudgetCheck
		for _, ch := range checkBudgets(c.sc, bf) {
			if ch.Metric == c.metric {
				got = &ch
			}
		}
		if got == nil || !got.Measured || got.OK || got.Actual != c.actual {
			t.Errorf("%s: check %+v, want %s measured at %v and exceeded", c.key, got, c.metric, c.actual)
		}
	}
}

// An unknown key in either file is an error naming the file, line and column.
func TestUnknownKeysNameFileAndLine(t *testing.T) {
	dir := t.TempDir()
	bf := filepath.Join(dir, budgetFileName)
	os.WriteFile(bf, []byte("budgets:\n  mobile:\n    max_latency_ms: 250\n    max_cpu_pct: 70\n"), 0o644)
	if _, err := LoadBudgetFile(bf); err == nil || !strings.Contains(err.Error(), bf+":4:5: unknown key \"max_cpu_pct\"") {
		t.Errorf("budget file with max_cpu_pct: %v", err)
	}
	os.WriteFile(bf, []byte("budgets:\n  mobile:\n    budgets: {latency_ms.p50: \"about 5\"}\n"), 0o644)
	if _, err := LoadBudgetFile(bf); err == nil || !strings.Contains(err.Error(), bf+":3:") {
		t.Errorf("budget file with a bad expression: %v", err)
	}
	tf := filepath.Join(dir, thresholdsFileName)
	os.WriteFile(tf, []byte("{\n  \"latency_regression_threshold\": 15.0,  # 15% increase fails\n  \"disk_regression_threshold\": 5\n}\n"), 0o644)
	var th Thresholds
	if err := th.LoadFile(tf); err == nil || !strings.Contains(err.Error(), tf+":3:3: unknown key \"disk_regression_threshold\"") {
		t.Errorf("thresholds file with an unknown key: %v", err)
	}
}

// Each of the four *_regression_threshold keys decides the verdict of the metrics of its kind:
// a change 12% worse is a regression under a 10% threshold and not under a 20% one.
func TestRegressionThresholdKeys(t *testing.T) {
	for _, c := range []struct {
		key, metric string
		worse       float64 // factor that makes the metric 12% worse
	}{
		{"latency_regression_threshold", "latency_ms", 1.12},
		{"latency_regression_threshold", "execution_time", 1.12}, // seed 000's name
		{"memory_regression_threshold", "peak_rss_mb", 1.12},
		{"memory_regression_threshold", "memory_used_mb", 1.12},
		{"throughput_regression_threshold", "throughput_ips", 0.88},
		{"throughput_regression_threshold", "throughput", 0.88}, // seed 000's name
		{"cpu_regression_threshold", "cpu_pct", 1.12},
	} {
		for _, limit := range []string{"10", "20"} {
			dir := t.TempDir()
			tf := filepath.Join(dir, thresholdsFileName)
			os.WriteFile(tf, []byte(`{"`+c.key+`": `+limit+`}`), 0o644)
			var th Thresholds
			if err := th.LoadFile(tf); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 3))
			old := scenario("b", nil, map[string][]float64{c.metric: lognormal(rng, 40, 100, 0.02)})
			nw := scenario("b", nil, map[string][]float64{c.metric: lognormal(rng, 40, 100*c.worse, 0.02)})
			// Gated: the threshold is what is tested here (only latency_ms gates by default).
			rep := Runs(run("old", old), run("new", nw), Config{Thresholds: th, Gate: []string{c.metric}})
			want := limit == "10"
			if got := rep.Regressions == 1; got != want {
				t.Errorf("%s=%s, %s 12%% worse: %d regressions (rows %+v), want regression %v", c.key, limit, c.metric, rep.Regressions, rep.Rows[0], want)
			}
		}
	}
}

// Seed 003's overhead check between two scenarios of one run, per point of the other axes.
func TestRatioBudgets(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	mk := func(variant string, batch int, median float64) result.Scenario {
		s := scenario("train", map[string]any{"variant": variant, "batch_size": batch}, map[string][]float64{"latency_ms": lognormal(rng, 200, median, 0.02)})
		s.Scenario = "batch_size=" + string(rune('0'+batch)) + "/variant=" + variant
		s.Budgets = map[string]string{"ratio(callback/baseline).latency_ms.p50": "<= 1.05", "ratio(nothing/baseline).latency_ms.p50": "<= 1.05"}
		return s
	}
	r := run("r", mk("baseline", 1, 100), mk("callback", 1, 103), mk("baseline", 8, 100), mk("callback", 8, 110))
	checks, exceeded := CheckRunBudgets(r, nil)
	got := map[string]BudgetCheck{}
	for _, c := range checks {
		got[c.Scenario+"÷"+c.Against+" "+c.Metric] = c
	}
	b1 := got["batch_size=1/variant=callback÷batch_size=1/variant=baseline ratio(callback/baseline).latency_ms.p50"]
	b8 := got["batch_size=8/variant=callback÷batch_size=8/variant=baseline ratio(callback/baseline).latency_ms.p50"]
	if !b1.Measured || !b1.OK || b1.Actual < 1.01 || b1.Actual > 1.05 || b1.CI == nil {
		t.Errorf("batch 1, 3%% overhead: %+v, want ok with a CI", b1)
	}
	if !b8.Measured || b8.OK || b8.Actual < 1.07 || b8.CI == nil || b8.CI.Lo < 1.05 {
		t.Errorf("batch 8, 10%% overhead: %+v, want exceeded with a CI above 1.05", b8)
	}
	none := got["*÷ ratio(nothing/baseline).latency_ms.p50"]
	if none.Measured || !none.OK {
		t.Errorf("a ratio that selects nothing: %+v, want reported not measured", none)
	}
	if exceeded != 1 {
		t.Errorf("%d budgets exceeded, want 1: %+v", exceeded, checks)
	}
}
