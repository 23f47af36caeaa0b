package history

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/inferbench/inferbench/stats"
)

var falseAlarmSeries = flag.Int("series", 2000, "TestMaxPFalseAlarmRate: A/A series to measure")

// TestMaxPFalseAlarmRate measures the false-alarm rate of `history --max-p 0.01`: A/A series of 10
// runs (normal noise, CV 5%, no shift), each from its own seed, flagged when a change point is
// found. docs/history.md quotes the figure measured on 1,000,000 series:
//
//	go test ./history -run MaxPFalseAlarmRate -v -args -series 1000000
//
// At the quick default (2,000 series) it holds the rate under 2%.
func TestMaxPFalseAlarmRate(t *testing.T) {
	n := *falseAlarmSeries
	flagged := 0
	for i := range n {
		rng := rand.New(rand.NewPCG(uint64(i), 2201))
		xs := make([]float64, 10)
		for j := range xs {
			xs[j] = 1 + 0.05*rng.NormFloat64()
		}
		if len(stats.ChangePoints(xs, stats.ChangeOptions{MaxP: 0.01})) > 0 {
			flagged++
		}
	}
	p := float64(flagged) / float64(n)
	half := 1.96 * math.Sqrt(p*(1-p)/float64(n))
	t.Logf("--max-p 0.01, A/A, 10 runs: %d of %d series flagged, %.2f%% (95%% CI %.2f-%.2f%%)", flagged, n, 100*p, 100*math.Max(0, p-half), 100*(p+half))
	if p > 0.02 {
		t.Errorf("--max-p 0.01: %.2f%% of A/A series flagged, want at most 2%%", 100*p)
	}
}
