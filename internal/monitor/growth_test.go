package monitor

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

func TestLeastSquares(t *testing.T) {
	a, b, r2, ok := LeastSquares([]float64{0, 1, 2, 3}, []float64{1, 3, 5, 7})
	if !ok || a != 1 || b != 2 || r2 != 1 {
		t.Errorf("got a=%v b=%v r2=%v ok=%v, want 1, 2, 1", a, b, r2, ok)
	}
	if _, _, _, ok := LeastSquares([]float64{1, 1}, []float64{1, 2}); ok {
		t.Error("fit with no spread in x succeeded")
	}
	if _, _, r2, _ := LeastSquares([]float64{0, 1, 2}, []float64{5, 5, 5}); r2 != 1 {
		t.Errorf("flat line r2 = %v, want 1", r2)
	}
}

func timeline(n int, f func(x float64) float64) result.Timeline {
	tl := result.Timeline{Name: "rss_mb", Every: 1}
	for i := 0; i < n; i++ {
		x := float64(i) * 0.1
		tl.T = append(tl.T, x)
		tl.V = append(tl.V, f(x))
	}
	return tl
}

func TestGrowth(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tl      result.Timeline
		flagged bool
	}{
		// 200 MB growing 2 MB/s over 10 s: 20 MB, 10% — a leak.
		{"steady leak", timeline(100, func(x float64) float64 { return 200 + 2*x }), true},
		// The same rise but only 2% of a 1 GB process: below the fraction.
		{"small relative to size", timeline(100, func(x float64) float64 { return 1000 + 2*x }), false},
		// Noise around a flat line.
		{"flat with noise", timeline(100, func(x float64) float64 { return 200 + 5*math.Sin(x*7) }), false},
		// 3 MB over the window: below 10 MB.
		{"tiny rise", timeline(100, func(x float64) float64 { return 20 + 0.3*x }), false},
		{"too few samples", timeline(4, func(x float64) float64 { return 200 + 100*x }), false},
	} {
		g := Growth(tc.tl, 10, 1000, DefaultGrowthThreshold)
		if g.Flagged != tc.flagged {
			t.Errorf("%s: flagged = %v, want %v (%+v)", tc.name, g.Flagged, tc.flagged, g)
		}
		if tc.flagged && g.Warning() == nil {
			t.Errorf("%s: flagged without a warning", tc.name)
		}
	}
	g := Growth(timeline(101, func(x float64) float64 { return 200 + 2*x }), 10, 500, DefaultGrowthThreshold)
	if !near(g.RiseMB, 20, 1e-9) || !near(g.PerIterMB, 0.04, 1e-12) || !near(g.SlopeMBPerS, 2, 1e-9) {
		t.Errorf("growth = %+v, want rise 20 MB, 0.04 MB/iteration, 2 MB/s", g)
	}
}

func ExampleGrowth() {
	// RSS sampled every 100 ms for 10 s, rising 2 MB/s from 200 MB, over 500 iterations.
	tl := result.Timeline{Name: "rss_mb"}
	for i := 0; i <= 100; i++ {
		tl.T = append(tl.T, float64(i)/10)
		tl.V = append(tl.V, 200+2*float64(i)/10)
	}
	g := Growth(tl, 10, 500, DefaultGrowthThreshold)
	fmt.Println(g.Warning())
	// Output: memory growth: RSS rose 20.0 MB over the window in steady state (its second half: 2.000 MB/s, 9.5% of 210 MB, r²=1.00), 0.040 MB per iteration
}

// warmup is RSS of inferbench's own process in a serving run as measured (issue 25): 57 MB rising
// towards 88 MB, most of it in the first seconds, sampled every 100 ms for secs seconds.
func warmup(secs float64) result.Timeline {
	return timeline(int(secs*10), func(x float64) float64 { return 57 + 31*(1-math.Exp(-x/3)) })
}

// TestGrowthWarmupIsNotALeak: warm-up that levels off is not growth, and a run too short to tell
// is not judged. Before, the whole window was fitted: the 3.6 s run (57 → 79 MB) and the 20 s run
// that levels off at 88 MB were both flagged.
func TestGrowthWarmupIsNotALeak(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tl      result.Timeline
		window  float64
		flagged bool
		reason  string
	}{
		{"short serving run", warmup(3.6), 3.6, false, "too short to tell a leak from warm-up"},
		{"20 s run levelling off", warmup(20), 20, false, ""},
		// A leak after the same warm-up is still a leak.
		{"leak after warm-up", timeline(200, func(x float64) float64 { return 57 + 31*(1-math.Exp(-x/3)) + 2*x }), 20, true, "steady state"},
		{"leak in a short run", timeline(50, func(x float64) float64 { return 200 + 10*x }), 5, false, "not judged"},
	} {
		g := Growth(tc.tl, tc.window, 1000, DefaultGrowthThreshold)
		if g.Flagged != tc.flagged || !strings.Contains(g.Reason, tc.reason) {
			t.Errorf("%s: flagged %v (%q), want %v (%q)", tc.name, g.Flagged, g.Reason, tc.flagged, tc.reason)
		}
	}
}
