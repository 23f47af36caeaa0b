package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/perf/benchmath"
)

func TestBenjaminiHochberg(t *testing.T) {
	// Values checked against R: p.adjust(c(0.01, 0.04, 0.03, 0.005, 0.5), "BH") and "holm".
	ps := []float64{0.01, 0.04, 0.03, 0.005, 0.5}
	approx := cmpopts.EquateApprox(0, 1e-12)
	if d := cmp.Diff([]float64{0.025, 0.05, 0.05, 0.025, 0.5}, BenjaminiHochberg(ps), approx); d != "" {
		t.Errorf("BH (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]float64{0.04, 0.09, 0.09, 0.025, 0.5}, holmAdjust(ps), approx); d != "" {
		t.Errorf("Holm (-want +got):\n%s", d)
	}
}

func TestChangePoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var xs []float64
	for i := 0; i < 120; i++ {
		level := 10.0
		switch {
		case i >= 80:
			level = 11 // +10% from the middle segment
		case i >= 40:
			level = 12 // +20%
		}
		xs = append(xs, level*(1+0.02*rng.NormFloat64()))
	}
	got := ChangePoints(xs, ChangeOptions{})
	if len(got) != 2 {
		t.Fatalf("ChangePoints found %d shifts, want 2: %+v", len(got), got)
	}
	for i, want := range []struct {
		index int
		mag   float64
	}{{40, 0.2}, {80, -1.0 / 12}} {
		if abs(got[i].Index-want.index) > 1 || math.Abs(got[i].Magnitude-want.mag) > 0.02 || got[i].P >= 0.001 {
			t.Errorf("shift %d = %+v, want index ~%d, magnitude ~%.3f, p < 0.001", i, got[i], want.index, want.mag)
		}
	}
	// Deterministic: the same series gives the same answer.
	if d := cmp.Diff(got, ChangePoints(xs, ChangeOptions{})); d != "" {
		t.Errorf("second call differs:\n%s", d)
	}
	// Noise alone: no shift.
	flat := make([]float64, 200)
	for i := range flat {
		flat[i] = 10 * (1 + 0.05*rng.NormFloat64())
	}
	if cps := ChangePoints(flat, ChangeOptions{}); len(cps) != 0 {
		t.Errorf("ChangePoints on noise found %+v, want none", cps)
	}
	// A magnitude floor drops small shifts.
	if cps := ChangePoints(xs, ChangeOptions{MinMagnitude: 0.12}); len(cps) != 1 || abs(cps[0].Index-40) > 1 {
		t.Errorf("with MinMagnitude 0.12: %+v, want only the +20%% shift at 40", cps)
	}
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

func TestBootstrapRatio(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(scale float64) []float64 {
		xs := make([]float64, 400)
		for i := range xs {
			xs[i] = scale * math.Exp(0.2*rng.NormFloat64())
		}
		return xs
	}
	old, same, slower := draw(10), draw(10), draw(13)
	var b Bootstrap
	r, ci, test, ok := b.RatioTest(old, slower, 0.95)
	if !ok || r < 1.2 || ci.Lo <= 1 || test.P > 0.01 {
		t.Errorf("p95 ratio of a 30%% slowdown: ratio %.3f ci %+v p %.4f ok %v; want >1.2, CI above 1, p <= 0.01", r, ci, test.P, ok)
	}
	_, ci2, test2, _ := b.RatioTest(old, same, 0.95)
	if ci2.Lo > 1 || ci2.Hi < 1 || test2.P < 0.05 {
		t.Errorf("p95 ratio of the same distribution: ci %+v p %.3f; want a CI around 1 and p >= 0.05", ci2, test2.P)
	}
	_, ci3, _, _ := b.RatioTest(old, slower, 0.95)
	if ci3 != ci {
		t.Errorf("bootstrap is not deterministic: %+v then %+v", ci, ci3)
	}
	qi, ok := b.QuantileCI(old, 0.99)
	if s := append([]float64(nil), old...); !ok || qi.Lo > qi.Hi || qi.Hi > maxOf(s) {
		t.Errorf("QuantileCI p99 = %+v", qi)
	}
}

func maxOf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

func TestMannWhitney(t *testing.T) {
	old := []float64{10, 11, 12, 10.5, 11.5, 10.2, 11.1, 10.9}
	newer := []float64{13, 14, 12.8, 13.5, 14.2, 13.1, 12.9, 13.6}
	if got := MannWhitney(old, newer, 0); got.P > 0.001 || got.N1 != 8 {
		t.Errorf("MannWhitney on separated samples = %+v, want p <= 0.001", got)
	}
	if got := MannWhitney(old[:3], newer[:3], 0); got.P <= 0.05 || len(got.Warnings) == 0 {
		t.Errorf("MannWhitney n=3 = %+v, want not significant with a too-few-samples warning", got)
	}
}

// The memoised exact path gives benchmath's p-values bit for bit, with and without ties.
func TestMannWhitneyMatchesBenchmath(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for i := 0; i < 300; i++ {
		n1, n2 := 3+rng.IntN(60), 3+rng.IntN(60)
		shift := []float64{1, 1.02, 1.1}[i%3]
		a, b := make([]float64, n1), make([]float64, n2)
		for k := range a {
			a[k] = 10 * math.Exp(0.05*rng.NormFloat64())
		}
		for k := range b {
			b[k] = 10 * shift * math.Exp(0.05*rng.NormFloat64())
		}
		if i%5 == 0 { // ties
			b[0], a[0] = a[1], a[1]
		}
		th := &benchmath.Thresholds{CompareAlpha: 0.05}
		want := benchmath.AssumeNothing.Compare(benchmath.NewSample(append([]float64(nil), a...), th), benchmath.NewSample(append([]float64(nil), b...), th))
		got := MannWhitney(a, b, 0.05)
		if got.P != want.P || len(got.Warnings) != len(want.Warnings) {
			t.Fatalf("n=%d+%d: p %v warnings %q, benchmath p %v warnings %v", n1, n2, got.P, got.Warnings, want.P, want.Warnings)
		}
	}
}
