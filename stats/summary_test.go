package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestSummarizeKnownValues(t *testing.T) {
	xs := []float64{7, 1, 10, 3, 5, 2, 9, 4, 8, 6} // 1..10 shuffled
	s, err := Summarize(xs)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"mean", s.Mean, 5.5},
		{"std", s.Std, 3.0276503540974917}, // sample std (n-1)
		{"min", s.Min, 1},
		{"max", s.Max, 10},
		{"median", s.Median, 5.5},
		{"p25", s.P25, 3.25}, // numpy.percentile(range(1,11), 25)
		{"p75", s.P75, 7.75},
		{"p90", s.P90, 9.1},
		{"p95", s.P95, 9.55},
		{"p99", s.P99, 9.91},
		{"cv", s.CV, 3.0276503540974917 / 5.5},
	}
	for _, c := range checks {
		if !near(c.got, c.want, 1e-9) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// n = 10: P(X <= 1) = 11/1024 <= 0.025 < P(X <= 2), so the interval is [x(2), x(9)] (1-based).
	if s.MedianCI == nil || s.MedianCI.Lo != 2 || s.MedianCI.Hi != 9 {
		t.Errorf("median CI = %+v, want [2, 9]", s.MedianCI)
	}
	if s.P999 != nil {
		t.Errorf("p99.9 reported for n = 10")
	}
	if s.Outliers != 0 {
		t.Errorf("outliers = %d, want 0", s.Outliers)
	}
	if xs[0] != 7 {
		t.Errorf("Summarize modified its input")
	}
}

func TestSummarizeOutliersAndSmallSamples(t *testing.T) {
	s, _ := Summarize([]float64{10, 11, 12, 10, 11, 12, 100})
	if s.Outliers != 1 {
		t.Errorf("outliers = %d, want 1 (the 100)", s.Outliers)
	}
	s, _ = Summarize([]float64{1, 2, 3, 4, 5})
	if s.MedianCI != nil || len(s.Warnings) == 0 {
		t.Errorf("n = 5 should have no CI and a warning, got %+v %q", s.MedianCI, s.Warnings)
	}
	s, _ = Summarize([]float64{4})
	if s.Median != 4 || s.Std != 0 || s.P99 != 4 {
		t.Errorf("single sample: %+v", s)
	}
	if _, err := Summarize(nil); err != ErrNoSamples {
		t.Errorf("empty: err = %v", err)
	}
}

func TestMedianCICoverage(t *testing.T) {
	// Exact binomial up to n = 1000, normal approximation above: both bracket the middle and
	// widen as the confidence grows.
	for _, n := range []int{6, 10, 30, 100, 999, 1001, 100000} {
		lo, hi, ok := medianCI(n, 0.95)
		if !ok || lo < 0 || hi >= n || lo > n/2 || hi < (n-1)/2 {
			t.Errorf("n=%d: (%d, %d, %v)", n, lo, hi, ok)
		}
		lo99, hi99, ok99 := medianCI(n, 0.99)
		if ok99 && (lo99 > lo || hi99 < hi) {
			t.Errorf("n=%d: 99%% interval (%d,%d) narrower than 95%% (%d,%d)", n, lo99, hi99, lo, hi)
		}
	}
	// Known value: n = 30 gives ranks 10 and 21 (1-based), as tables of the sign test give.
	if lo, hi, _ := medianCI(30, 0.95); lo != 9 || hi != 20 {
		t.Errorf("n=30: (%d, %d), want (9, 20)", lo, hi)
	}
}

func TestSummaryP999(t *testing.T) {
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	s, _ := Summarize(xs)
	if s.P999 == nil || !near(*s.P999, 999.001, 1e-9) {
		t.Errorf("p99.9 = %v, want 999.001", s.P999)
	}
}

func TestDistOverflowKeepsExactMoments(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	d := NewDist(1000)
	exact := make([]float64, 0, 50000)
	for range 50000 {
		x := math.Exp(r.NormFloat64()*0.3) * 10 // lognormal around 10 ms
		d.Add(x)
		exact = append(exact, x)
	}
	if d.Exact() || len(d.Samples()) != 1000 {
		t.Fatalf("exact=%v held=%d, want overflowed with 1000 held", d.Exact(), len(d.Samples()))
	}
	got, _ := d.Summary()
	want, _ := Summarize(exact)
	if got.N != want.N || !near(got.Mean, want.Mean, 1e-9) || !near(got.Std, want.Std, 1e-9) || got.Min != want.Min || got.Max != want.Max {
		t.Errorf("moments differ: got %+v want %+v", got, want)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p50", got.Median, want.Median}, {"p95", got.P95, want.P95}, {"p99", got.P99, want.P99}} {
		if math.Abs(c.got-c.want)/c.want > 0.002 { // 3 significant digits
			t.Errorf("%s = %v, exact %v", c.name, c.got, c.want)
		}
	}
	if !got.Approximate {
		t.Errorf("overflowed summary not marked approximate")
	}
}

func TestDistMergeEqualsSingle(t *testing.T) {
	a, b, all := NewDist(100), NewDist(100), NewDist(100)
	for i := range 500 {
		x := float64(i%37) + 0.5
		all.Add(x)
		if i%2 == 0 {
			a.Add(x)
		} else {
			b.Add(x)
		}
	}
	a.Merge(b)
	sa, _ := a.Summary()
	sall, _ := all.Summary()
	if sa.N != sall.N || !near(sa.Mean, sall.Mean, 1e-9) || !near(sa.Std, sall.Std, 1e-9) || sa.Median != sall.Median || sa.P99 != sall.P99 {
		t.Errorf("merged %+v\nsingle %+v", sa, sall)
	}
}

func ExampleSummarize() {
	s, _ := Summarize([]float64{12.1, 11.8, 12.4, 12.0, 30.2, 11.9, 12.2, 12.0})
	fmt.Printf("median %.2f ms, p95 %.2f ms, CI [%.1f, %.1f], %d outlier\n", s.Median, s.P95, s.MedianCI.Lo, s.MedianCI.Hi, s.Outliers)
	// Output: median 12.05 ms, p95 23.97 ms, CI [11.8, 30.2], 1 outlier
}
