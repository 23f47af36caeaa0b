package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHistogramMergeEqualsUnion checks the exactness bar of agent merges: histograms recorded by
// k agents, encoded to JSON and decoded, then merged, equal bucket for bucket the histogram of
// the union of their samples; count, min and max are exact and the mean agrees to rounding.
func TestHistogramMergeEqualsUnion(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{1, 2, 3, 16} {
		union := NewHistogram()
		parts := make([]*Histogram, k)
		for i := range parts {
			parts[i] = NewHistogram()
		}
		for i := range 50000 {
			// A wide, skewed latency: 0.05 ms to minutes, with a few clamped below the range.
			x := math.Exp(rng.NormFloat64()*1.5 + 3)
			if i%9973 == 0 {
				x = 0
			}
			union.Add(x)
			parts[rng.IntN(k)].Add(x) // agents see unequal shares
		}
		merged := NewHistogram()
		for _, p := range parts {
			data, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			var back Histogram
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			merged.Merge(&back)
		}
		if diff := cmp.Diff(union.Buckets(), merged.Buckets()); diff != "" {
			t.Fatalf("k=%d: merged buckets differ from the union's (-union +merged):\n%s", k, diff)
		}
		us, _ := union.Summary()
		ms, _ := merged.Summary()
		if us.N != ms.N || us.Min != ms.Min || us.Max != ms.Max || us.P99 != ms.P99 || us.Median != ms.Median || *us.P999 != *ms.P999 {
			t.Errorf("k=%d: summaries differ: union %+v merged %+v", k, us, ms)
		}
		if math.Abs(us.Mean-ms.Mean) > 1e-9*us.Mean || math.Abs(us.Std-ms.Std) > 1e-9*us.Std {
			t.Errorf("k=%d: moments differ: mean %v vs %v, std %v vs %v", k, us.Mean, ms.Mean, us.Std, ms.Std)
		}
	}
}

// TestHistogramPercentilesNotAveraged shows why the merge adds buckets: two agents with very
// different latencies have a merged p99 that no average of their p99s gives.
func TestHistogramPercentilesNotAveraged(t *testing.T) {
	fast, slow := NewHistogram(), NewHistogram()
	for range 990 {
		fast.Add(10)
	}
	for range 10 {
		slow.Add(1000)
	}
	m := NewHistogram()
	m.Merge(fast)
	m.Merge(slow)
	// 1,000 samples, 10 of them at 1000 ms: the 99th percentile is the last fast one, the
	// 99.9th a slow one.
	if got := m.Quantile(0.99); math.Abs(got-10) > 0.01 {
		t.Errorf("p99 = %v, want 10", got)
	}
	if got := m.Quantile(0.999); math.Abs(got-1000) > 1 {
		t.Errorf("p99.9 = %v, want 1000", got)
	}
}

func TestHistogramRejectsBadJSON(t *testing.T) {
	h := NewHistogram()
	h.Add(5)
	data, _ := json.Marshal(h)
	var j map[string]any
	_ = json.Unmarshal(data, &j)
	for name, mut := range map[string]func(map[string]any){
		"count mismatch": func(m map[string]any) { m["n"] = 7 },
		"other scale":    func(m map[string]any) { m["scale"] = 1 },
		"no buckets":     func(m map[string]any) { delete(m, "hdr") },
	} {
		c := map[string]any{}
		for k, v := range j {
			c[k] = v
		}
		mut(c)
		bad, _ := json.Marshal(c)
		var back Histogram
		if err := json.Unmarshal(bad, &back); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}
