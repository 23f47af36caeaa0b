package compare

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/stats"
)

var noiseTable = flag.Bool("noise-table", false, "print docs/measurements/verdicts.md's simulation of the noise-aware threshold (TestNoiseTable)")

// secondLargestThreshold is NoiseOf's rule before this one (kept to compare in the table): the
// larger of 2.576 robust deviations and the second largest change, × 1.5.
func secondLargestThreshold(centers []float64) float64 {
	d := make([]float64, 0, len(centers)-1)
	for i := 1; i < len(centers); i++ {
		d = append(d, math.Log(centers[i]/centers[i-1]))
	}
	slices.Sort(d)
	med := stats.Quantile(d, 0.5)
	dev := make([]float64, len(d))
	for i, x := range d {
		dev[i] = math.Abs(x - med)
	}
	slices.Sort(dev)
	b := math.Max(2.576*1.4826*stats.Quantile(dev, 0.5), dev[len(dev)-2])
	return math.Max(1, math.Ceil(10*1.5*100*(math.Exp(b)-1))/10)
}

// TestNoiseTable simulates histories of unchanged runs under several kinds of run-to-run noise
// and counts how often the next unchanged run exceeds the threshold the history gives (a false
// failure, before any significance test: an upper bound) and how often a run 10% slower does
// (detection), for the rule before and NoiseOf's. docs/measurements/verdicts.md's table is its output:
//
//	go test ./compare -run TestNoiseTable -noise-table -v
func TestNoiseTable(t *testing.T) {
	if !*noiseTable {
		t.Skip("prints a table for docs/measurements/verdicts.md: -noise-table")
	}
	gamma := func(r *rand.Rand, k int) float64 {
		c := 0.0
		for range k {
			x := r.NormFloat64()
			c += x * x
		}
		return c
	}
	conds := []struct {
		name string
		run  func(r *rand.Rand) float64 // one unchanged run's center
	}{
		{"normal, 1% (a CPU time)", func(r *rand.Rand) float64 { return 1 + 0.01*r.NormFloat64() }},
		{"normal, 5%", func(r *rand.Rand) float64 { return 1 + 0.05*r.NormFloat64() }},
		{"Student t (3 degrees of freedom), 3%", func(r *rand.Rand) float64 {
			return math.Exp(0.03 * r.NormFloat64() / math.Sqrt(gamma(r, 3)/3))
		}},
		{"2% normal, and 1 run in 30 +30% (a few worst moments)", func(r *rand.Rand) float64 {
			v := 1 + 0.02*r.NormFloat64()
			if r.IntN(30) == 0 {
				v *= 1.3
			}
			return v
		}},
		{"2% normal, and 1 run in 10 +25%", func(r *rand.Rand) float64 {
			v := 1 + 0.02*r.NormFloat64()
			if r.IntN(10) == 0 {
				v *= 1.25
			}
			return v
		}},
	}
	const histories = 20000
	var b strings.Builder
	b.WriteString("| run-to-run noise | stored runs | false, second largest (before) | false, a few left out (now) | 10% found, before | 10% found, now | median threshold, before / now |\n|---|---|---|---|---|---|---|\n")
	for _, c := range conds {
		var cols [6][]string
		for _, n := range []int{10, 30, 50} {
			r := rand.New(rand.NewPCG(uint64(n), 31))
			var falseOld, falseNew, foundOld, foundNew int
			var thOld, thNew []float64
			xs := make([]float64, n)
			for range histories {
				for i := range xs {
					xs[i] = c.run(r)
				}
				old := secondLargestThreshold(xs)
				nn, _ := noiseOf(xs, 0)
				thOld, thNew = append(thOld, old), append(thNew, nn.ThresholdPct)
				a, next := xs[n-1], c.run(r)
				aa, slow := 100*(next/a-1), 100*(1.1*next/a-1)
				falseOld += b2i(aa > old)
				falseNew += b2i(aa > nn.ThresholdPct)
				foundOld += b2i(slow > old)
				foundNew += b2i(slow > nn.ThresholdPct)
			}
			slices.Sort(thOld)
			slices.Sort(thNew)
			pct := func(k int) string { return fmt.Sprintf("%.2g%%", 100*float64(k)/histories) }
			cols[0] = append(cols[0], pct(falseOld))
			cols[1] = append(cols[1], pct(falseNew))
			cols[2] = append(cols[2], pct(foundOld))
			cols[3] = append(cols[3], pct(foundNew))
			cols[4] = append(cols[4], fmt.Sprintf("%.1f%% / %.1f%%", thOld[histories/2], thNew[histories/2]))
		}
		fmt.Fprintf(&b, "| %s | 10 / 30 / 50 | %s | %s | %s | %s | %s |\n", c.name,
			strings.Join(cols[0], " / "), strings.Join(cols[1], " / "), strings.Join(cols[2], " / "), strings.Join(cols[3], " / "), strings.Join(cols[4], "; "))
	}
	t.Log("\n" + b.String())
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
