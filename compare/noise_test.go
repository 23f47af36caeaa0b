package compare

import "testing"

// NoiseOf bounds the changes between consecutive unchanged runs where they are not normal: a
// machine that is slower in one run of five (+25%) changes by 25% in a third of the pairs, which
// the median deviation (zero: most pairs do not change) does not see. One change stays out of
// the bound, so a single real shift still counts as one outlier.
func TestNoiseOfTail(t *testing.T) {
	var twoStates []float64
	for i := range 20 {
		v := 10.0
		if i%5 == 2 {
			v = 12.5
		}
		twoStates = append(twoStates, v*(1+0.001*float64(i%2)))
	}
	n, ok := noiseOf(twoStates, 0)
	if !ok || n.NoisePct < 25 || n.ThresholdPct < 37.5 {
		t.Errorf("runs in two states 25%% apart: %+v, want noise of at least 25%% and a threshold of at least 37.5%%", n)
	}
	// A quiet history that moved once by 30%: the move is not noise.
	var moved []float64
	for i := range 20 {
		v := 10 * (1 + 0.002*float64(i%3))
		if i >= 10 {
			v *= 1.3
		}
		moved = append(moved, v)
	}
	if n, ok := noiseOf(moved, 0); !ok || n.ThresholdPct > 2 {
		t.Errorf("quiet history with one +30%% shift: %+v, want a threshold below 2%%", n)
	}
}
