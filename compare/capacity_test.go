package compare

import (
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// TestCapacityGates: a capacity search's scenario gates on capacity_rps, judged by the runs'
// lower bounds: an estimate below the old run's 95% bound fails the comparison; one within the
// noise the bounds allow does not.
func TestCapacityGates(t *testing.T) {
	sc := func(capacity, lower float64) result.Scenario {
		s := scenario("llm", map[string]any{}, map[string][]float64{"ttft_ms": {10, 11, 12, 13, 14}})
		s.Subject = "openai"
		s.Metrics["capacity_rps"] = result.Metric{Unit: "1/s", Better: "higher", Value: &capacity}
		s.Metrics["capacity_lower_rps"] = result.Metric{Unit: "1/s", Better: "higher", Value: &lower}
		return s
	}
	for _, tc := range []struct {
		name     string
		old, new result.Scenario
		verdict  string
		failed   bool
	}{
		{"below the old bound and beyond the threshold: a regression", sc(100, 95), sc(80, 76), Regression, true},
		{"within the old bound: unchanged", sc(100, 95), sc(97, 92), Unchanged, false},
		{"the new bound above the old estimate: an improvement", sc(100, 95), sc(130, 125), Improvement, false},
	} {
		rep := Runs(run("a", tc.old), run("b", tc.new), Config{Alpha: 0.05})
		var row *Row
		for i := range rep.Rows {
			if rep.Rows[i].Metric == "capacity_rps" {
				row = &rep.Rows[i]
			}
		}
		if row == nil {
			t.Fatalf("%s: no capacity_rps row", tc.name)
		}
		if row.Verdict != tc.verdict || !row.Gated || rep.Failed() != tc.failed {
			t.Errorf("%s: verdict %s (gated %v), failed %v; want %s, failed %v", tc.name, row.Verdict, row.Gated, rep.Failed(), tc.verdict, tc.failed)
		}
	}
}

// TestPrefixCacheWarning: a scenario whose server read its prefix cache far more in one run than
// in the other is warned about; a small difference is not.
func TestPrefixCacheWarning(t *testing.T) {
	sc := func(hit float64) result.Scenario {
		s := scenario("llm", map[string]any{}, map[string][]float64{"ttft_ms": {10, 11, 12, 13, 14}})
		s.Extra.Resources = &result.Resources{Metrics: []result.Aggregate{{Name: "server_prefix_cache_hit_pct", Unit: "%", Kind: "gauge", N: 30, Mean: hit, Last: hit}}}
		return s
	}
	warned := func(rep *Report) bool {
		for _, w := range rep.Warnings {
			if strings.Contains(w, "prefix-cache hit rate") {
				return true
			}
		}
		return false
	}
	if rep := Runs(run("a", sc(80)), run("b", sc(3)), Config{Alpha: 0.05}); !warned(rep) {
		t.Errorf("80%% against 3%%: warnings %q, want the prefix-cache warning", rep.Warnings)
	}
	if rep := Runs(run("a", sc(40)), run("b", sc(42)), Config{Alpha: 0.05}); warned(rep) {
		t.Errorf("40%% against 42%%: warnings %q, want none about the cache", rep.Warnings)
	}
}
