package advice

import (
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

func val(v float64) result.Metric { return result.Metric{Value: &v} }

func TestRules(t *testing.T) {
	r := &result.Run{Scenarios: []result.Scenario{
		{Benchmark: "resnet", Scenario: "fp32", Status: result.StatusOK, Params: map[string]any{"dtype": "float32", "batch_size": 1},
			Metrics: map[string]result.Metric{"latency_ms": val(80), "gpu_util_pct": val(20)}},
		{Benchmark: "resnet", Scenario: "fp16", Status: result.StatusOK, Params: map[string]any{"dtype": "float16", "batch_size": 1},
			Metrics: map[string]result.Metric{"latency_ms": val(40), "gpu_util_pct": val(70)}},
		{Benchmark: "bert", Scenario: "b64", Status: result.StatusOK, Params: map[string]any{"dtype": "float32", "batch_size": 64},
			Metrics: map[string]result.Metric{"latency_ms": val(10), "gpu_util_pct": val(30)}, Warnings: []string{"memory growth: +120 MB over 30 s (r² 0.93)"}},
	}}
	hist := func(s *result.Scenario, m string) []float64 {
		if s.Benchmark == "bert" && m == "memory_mb" {
			return []float64{100, 101, 99, 100, 100, 150, 151, 149, 150, 150}
		}
		return nil
	}
	tips := For(r, Rules{}, hist)
	got := map[string]string{}
	for _, tp := range tips {
		got[tp.Rule+" "+tp.Scenario] = tp.Text
	}
	cases := []struct{ key, want string }{
		{"quantisation resnet/fp32", "2.00× faster"}, // measured sibling quoted
		{"batching resnet/fp32", "busy 20%"},         // idle GPU at batch 1
		{"memory-growth bert/b64", "+50%"},           // history change point (the warning tip shares the key)
	}
	for _, c := range cases {
		if !strings.Contains(got[c.key], c.want) {
			t.Errorf("%s = %q, want it to mention %q (all: %v)", c.key, got[c.key], c.want, got)
		}
	}
	// Not advised: fast fp16, a large batch, a fast model.
	for _, k := range []string{"quantisation resnet/fp16", "batching bert/b64", "quantisation bert/b64", "batching resnet/fp16"} {
		if _, ok := got[k]; ok {
			t.Errorf("unexpected tip %s: %s", k, got[k])
		}
	}
	if n := strings.Count(strings.Join(func() []string {
		var s []string
		for _, tp := range tips {
			s = append(s, tp.Rule)
		}
		return s
	}(), " "), "memory-growth"); n != 2 {
		t.Errorf("%d memory-growth tips, want 2 (the in-run warning and the history shift)", n)
	}
}
