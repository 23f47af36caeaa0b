package capacity

import (
	"fmt"
	"math"
	"sync"
)

// Trial is one step of a search: the requests an open loop at its rate has measured so far,
// judged at looks after Min, 2×Min, 4×Min, ... requests (and at Max) until a look decides. A
// Prober calls Observe as its measured requests end, from any goroutine, and stops sending once
// Observe returns true.
type Trial struct {
	rate       float64
	objectives []Objective
	min, max   int
	warmup     int
	alpha      float64 // one-sided, per look
	cluster    float64 // the longest clusters of misses the search has seen (estimate)
	cluster0   float64 // cluster as the step ended
	passed     bool    // the step ended in a pass
	bound      string  // why the client may have set the step's figures (ClientBound); "" when not

	mu      sync.Mutex
	met     [][]bool  // by objective, by request index (arrival order)
	ttft    []float64 // by request index: the time to first token (NaN: none)
	have    []bool    // whether request i has ended
	prefix  int       // requests 0..prefix-1 have all ended
	look    int       // the request count of the next look
	looks   int
	verdict Verdict
	done    bool
	est     []Estimate
	seen    float64 // the longest clusters of misses in this step
	judged  int
}

func newTrial(rate float64, o []Objective, minN, maxN int, alpha, cluster float64) *Trial {
	t := &Trial{rate: rate, objectives: o, min: minN, max: maxN, alpha: alpha, cluster: cluster, look: minN,
		met: make([][]bool, len(o)), have: make([]bool, maxN), ttft: make([]float64, maxN)}
	for j := range t.met {
		t.met[j] = make([]bool, maxN)
	}
	return t
}

// Rate is the step's arrival rate in requests per second.
func (t *Trial) Rate() float64 { return t.rate }

// Warmup is the number of requests the step sends before its measured ones.
func (t *Trial) Warmup() int { return t.warmup }

// Max is the number of measured requests the step sends at most; their indexes are 0..Max-1 in
// the order they are sent.
func (t *Trial) Max() int { return t.max }

// Objectives are the objectives each request is judged on.
func (t *Trial) Objectives() []Objective { return t.objectives }

// Observe records measured request i (in the order sent) with its figures. It returns true once
// the step is decided: the prober sends no more requests (those in flight may still be observed,
// and are not counted).
func (t *Trial) Observe(i int, m Measures) (decided bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done || i < 0 || i >= t.max || t.have[i] {
		return t.done
	}
	t.have[i] = true
	t.ttft[i] = m.TTFT
	for j, o := range t.objectives {
		t.met[j][i] = o.Met(m)
	}
	for t.prefix < t.max && t.have[t.prefix] {
		t.prefix++
	}
	for !t.done && t.prefix >= t.look {
		t.judge(t.look)
		if t.look >= t.max {
			t.done = true
		}
		t.look = min(t.look*2, t.max)
	}
	return t.done
}

// ClientBound says that the client may have paced the step: why says which of its own delays
// (its schedule lag, its late reads, its CPU), ms the largest of them in milliseconds (NaN when
// not measured). A delay of at least ClientShare of the objectives' tightest limit moves requests
// across it: the search then takes no verdict from the step, runs the rate again, and stops with a
// ClientBoundError when the client paces it again. A smaller one is left to the load driver's
// client_bound warning.
func (t *Trial) ClientBound(why string, ms float64) {
	tight := math.Inf(1)
	for _, o := range t.objectives {
		for _, l := range o.Limits {
			tight = min(tight, l.Ms)
		}
	}
	if ms < ClientShare*tight {
		return
	}
	delay := "not measured"
	if !math.IsNaN(ms) {
		delay = fmt.Sprintf("%.2f ms", ms)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.bound = fmt.Sprintf("%s; the client's delay %s against a tightest limit of %.4g ms", why, delay, tight)
}

// ClientShare is the share of the tightest limit that the client's own delay may reach before a
// step is the client's rather than the server's: requests that far below the limit cross it.
const ClientShare = 0.1

// Decided reports whether the step has a verdict (or has run out of requests).
func (t *Trial) Decided() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.done
}

// judge decides on the first n requests: fail when some objective's upper bound is below its
// target, pass when every objective's lower bound is at or above it; over the n requests and
// over their second half alike. A rate the server cannot sustain makes its queue grow: the first
// requests of a step, sent to an idle server, meet their SLOs and the later ones do not, and
// over all of them the attainment may still read well. Its second half shows the trend: it must
// pass too, and its failing fails the step.
func (t *Trial) judge(n int) {
	t.looks++
	t.judged = n
	t.est = make([]Estimate, len(t.objectives))
	t.verdict = Unknown
	pass, fail := true, false
	for j, o := range t.objectives {
		e, l := estimate(t.met[j][:n], t.alpha, t.cluster)
		h, lh := estimate(t.met[j][n/2:n], t.alpha, t.cluster)
		t.est[j] = e
		t.seen = max(t.seen, l, lh)
		if e.Upper < o.Target || h.Upper < o.Target {
			fail = true
		}
		if e.Lower < o.Target || h.Lower < o.Target {
			pass = false
		}
	}
	switch {
	case fail:
		t.verdict, t.done = Fail, true
	case pass && !rising(t.ttft[:n]):
		t.verdict, t.done = Pass, true
	}
}

// rising reports whether the time to first token of the second half of xs is above that of its
// first half by more than their batch means' noise (one-sided, 5%): a queue growing through the
// step. A rate the server cannot sustain passes while its queue is still short, its first
// requests sent to an idle server; this holds such a step open until it fails.
func rising(xs []float64) bool {
	const k = batches / 2 // batches per half
	n := len(xs)
	if n < 2*k {
		return false
	}
	half := func(ys []float64) (mean, v float64) {
		var ms [k]float64
		for i := range k {
			lo, hi := i*len(ys)/k, (i+1)*len(ys)/k
			sum, c := 0.0, 0
			for _, y := range ys[lo:hi] {
				if !math.IsNaN(y) {
					sum += y
					c++
				}
			}
			if c > 0 {
				ms[i] = sum / float64(c)
			}
			mean += ms[i] / k
		}
		for _, m := range ms {
			v += (m - mean) * (m - mean) / (k - 1)
		}
		return mean, v / k
	}
	a, va := half(xs[:n/2])
	b, vb := half(xs[n/2:])
	return b-a > tQuantile(0.95, 2*(k-1))*math.Sqrt(va+vb)
}

// rejudge judges the step's last look again with cluster, the clusters of misses of the step
// nearest above it, and returns its verdict: a pass taken before the search had seen how long
// its misses cluster may not hold. The step's own verdict stays: a later step nearer above, whose
// misses cluster less, judges it again from it.
func (t *Trial) rejudge(cluster float64) Verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.passed {
		return t.verdict
	}
	c := max(cluster, t.cluster0)
	if c == t.cluster {
		return t.verdict
	}
	t.cluster = c
	looks := t.looks
	t.judge(t.judged)
	t.looks = looks
	if t.verdict != Pass {
		t.verdict = Unknown
	}
	return t.verdict
}

// finish judges a step that ended before its next look (interrupted, or the prober sent fewer
// than Max): on what it has, when that is at least Min requests.
func (t *Trial) finish() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.done && t.prefix >= t.min && t.prefix > t.judged {
		t.judge(t.prefix)
	}
	t.done = true
	if t.bound != "" {
		t.verdict = Unknown
	}
	t.passed, t.cluster0 = t.verdict == Pass, t.cluster
}
