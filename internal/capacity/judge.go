package capacity

import (
	"math"

	mstats "github.com/aclements/go-moremath/stats"
)

// Verdict is what a step says of its rate.
type Verdict int

// Verdicts.
const (
	Unknown Verdict = iota // not yet known: the attainment's interval still holds the target
	Pass                   // every objective's attainment is above its target, with confidence
	Fail                   // some objective's attainment is below its target, with confidence
)

func (v Verdict) String() string {
	switch v {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	}
	return "unknown"
}

// MarshalText writes the verdict as its word.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText reads a verdict's word.
func (v *Verdict) UnmarshalText(b []byte) error {
	switch string(b) {
	case "pass":
		*v = Pass
	case "fail":
		*v = Fail
	default:
		*v = Unknown
	}
	return nil
}

// Estimate is the attainment of one objective over a step's requests so far.
type Estimate struct {
	Attainment float64 `json:"attainment"` // the fraction of requests that met the objective
	Lower      float64 `json:"lower"`      // one-sided lower confidence bound at the look's level
	Upper      float64 `json:"upper"`      // one-sided upper confidence bound at the look's level
	// EffectiveN is the number of independent requests the step's are worth: requests that
	// queue together meet or miss their SLOs together, so n correlated requests carry the
	// information of fewer (n × the binomial variance / the batch-means variance).
	EffectiveN float64 `json:"effective_n"`
}

// batches is the number of batch means a look's variance is estimated from.
const batches = 10

// estimate judges indicators met (one per request, in arrival order) at one-sided level alpha,
// with cluster the clusters of misses of the step above (1: none). It returns the estimate and
// the clusters of the sample's own misses.
//
// Requests that queue behind one another miss together, so the binomial variance p(1-p)/n
// understates the attainment's by the length of a cluster of misses. Two estimates see it, and
// the wider holds:
//   - batch means: the requests cut into batches consecutive in arrival order, the spread of the
//     batches' attainments (Student's t with batches-1 degrees of freedom). It sees correlation
//     as long as a batch outlasts a busy period, but only where the sample has misses;
//   - clusters: the binomial counted in clusters rather than requests (n/L of them, L the
//     size-biased mean length of the runs of misses, at most a batch; at least cluster, the
//     hint of the step above, unless the sample has ownClusters misses of its own),
//     with the count shrunk by
//     half a cluster towards 1/2 (Jeffreys). A step without a miss is then not certain: 2,000
//     requests with no miss, where misses come 30 at a time, are 66 clusters without one.
func estimate(met []bool, alpha, cluster float64) (Estimate, float64) {
	n := len(met)
	k := 0
	// The runs of misses: their count and the sum of their squared lengths.
	sum2, run := 0.0, 0
	for _, m := range met {
		if m {
			k++
			if run > 0 {
				sum2 += float64(run * run)
				run = 0
			}
		} else {
			run++
		}
	}
	sum2 += float64(run * run)
	p := float64(k) / float64(n)
	// A run of misses as long as the sample is a queue that grew through it, not one cluster:
	// a cluster is at most a batch long.
	most := max(float64(n)/batches, 1)
	own := 1.0 // the clusters of this sample's own misses
	if miss := n - k; miss > 0 {
		own = min(max(sum2/float64(miss), 1), most)
	}
	l := own
	if n-k < ownClusters {
		l = max(l, min(cluster, most)) // too few misses to see how they cluster here
	}
	nu := float64(n) / l
	pj := (float64(k)/l + 0.5) / (nu + 1)
	seBin := math.Sqrt(pj * (1 - pj) / nu)
	b := min(batches, n)
	var means [batches]float64
	for i := range b {
		lo, hi := i*n/b, (i+1)*n/b
		c := 0
		for _, m := range met[lo:hi] {
			if m {
				c++
			}
		}
		means[i] = float64(c) / float64(hi-lo)
	}
	mean, ss := 0.0, 0.0
	for _, y := range means[:b] {
		mean += y
	}
	mean /= float64(b)
	for _, y := range means[:b] {
		ss += (y - mean) * (y - mean)
	}
	seBM := 0.0
	if b > 1 {
		seBM = math.Sqrt(ss / float64(b-1) / float64(b))
	}
	se := max(seBM, seBin)
	q := tQuantile(1-alpha, float64(max(b-1, 1)))
	return Estimate{Attainment: p, Lower: p - q*se, Upper: p + q*se, EffectiveN: pj * (1 - pj) / (se * se)}, own
}

// ownClusters is the misses a sample needs for its own clusters to replace those of the step
// above it (the hint): fewer say little about how misses cluster at its rate.
const ownClusters = 10

// tQuantile inverts Student's t distribution's CDF with v degrees of freedom by bisection.
func tQuantile(p, v float64) float64 {
	d := mstats.TDist{V: v}
	lo, hi := 0.0, 1000.0
	for range 100 {
		mid := (lo + hi) / 2
		if d.CDF(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
