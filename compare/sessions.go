package compare

import (
	"fmt"
	"math"
	"strings"

	"github.com/inferbench/inferbench/result"
)

// Comparisons across sessions (Config.Sessions). The samples of one session (a process, a job)
// say how much an iteration moves within it, and nothing of the machine's state in another: a
// VM here runs the same Python work at about 57 or 98 ms, switching every few seconds, and a
// process keeps the state it started in. An unchanged 3-test pytest session compared with its
// saved run failed 5 times in 5 (latency_ms +11.96%, p = 0.000, n = 99, against 5%): the test
// was right that the two sessions differed, and wrong to say the code did. Only the change
// between sessions that the store has seen (noiseOf over its stored runs) can tell a change
// of the code from the machine's; without it the answer is Unknown.

// SessionNoise is what a gated timed row compared across sessions knows of the change between
// two sessions of unchanged code.
type SessionNoise struct {
	// Runs is how many stored runs of the scenario have the metric (Config.History); Need how
	// many the run-to-run noise is learnt from (Config.MinHistory, default 10).
	Runs int `json:"runs"`
	Need int `json:"need"`
	// Learnt: the noise is known (Runs >= Need); NoisePct is its bound on the change between two
	// unchanged runs (historyNoise.NoisePct), and the row's threshold is at least 1.5 × it.
	Learnt   bool    `json:"learnt"`
	NoisePct float64 `json:"noise_pct,omitempty"`
	// DriftPct is the larger of the two runs' drift: the spread of the medians of five
	// consecutive blocks of a run's samples, in the order measured, in percent of the lowest.
	// The machine moved that much within one session (or the medians' own sampling error did),
	// so no change below it can be told between two sessions. It is a lower bound only, and
	// never judges: a process keeps the state it started in, and two sessions can differ by far
	// more than either drifts (the VM above: 1-2% within a session, 70% between two).
	DriftPct float64 `json:"drift_pct"`
}

// driftBlocks is how many consecutive blocks of a run's samples driftPct compares.
const driftBlocks = 5

// driftPct is how far the medians of driftBlocks consecutive blocks of xs (samples in the order
// measured) spread, in percent of the lowest; 0 with fewer than two samples a block.
func driftPct(xs []float64) float64 {
	if len(xs) < 2*driftBlocks {
		return 0
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for b := range driftBlocks {
		m := quantile(xs[b*len(xs)/driftBlocks:(b+1)*len(xs)/driftBlocks], 0.5)
		lo, hi = min(lo, m), max(hi, m)
	}
	if !(lo > 0) || math.IsInf(hi, 0) {
		return 0
	}
	return 100 * (hi/lo - 1)
}

// sessionThreshold readies row r of scenario s, compared in o and s across sessions, for its
// verdict: a gated row tested on its samples (not a count: counts do not move with the machine)
// gets its SessionNoise, and once the stored runs' noise is learnt its threshold is the larger of
// its own and the noise's (noiseOf): an override (--threshold, a recorded one) says which change
// matters, the noise which change two sessions can show. verdict then makes a regression of a
// row whose noise is not learnt Unknown.
func sessionThreshold(r *Row, o, s *result.Scenario, cfg Config) {
	if !r.Gated || !directed(r.Better) || r.Kind == Instructions || r.Method == CountMethod || math.IsNaN(r.P) {
		return
	}
	base, _, _ := strings.Cut(r.Metric, ".")
	sn := &SessionNoise{Need: needRuns(cfg.MinHistory), DriftPct: max(driftPct(o.Metrics[base].Samples), driftPct(s.Metrics[base].Samples))}
	var hist []float64
	if cfg.History != nil {
		hist = cfg.History(s, r.Metric)
	}
	sn.Runs = len(hist)
	if n, ok := noiseOf(hist, cfg.MinHistory); ok {
		sn.Learnt, sn.NoisePct = true, n.NoisePct
		if n.ThresholdPct > r.Threshold {
			r.Threshold, r.ThresholdRuns = n.ThresholdPct, n.Runs
		}
	}
	r.Sessions = sn
}

// Unresolved reports whether the row is a gated change beyond its threshold, worse or better,
// that two sessions cannot tell from the machine's run-to-run noise (Config.Sessions without a
// learnt noise): its verdict is Unknown. A worse one counts in Report.Unknown, which Strict
// fails; a better one (Improved) in Report.UnknownImprovements, which never fails.
func (r *Row) Unresolved() bool {
	return r.Verdict == Unknown && r.Gated && r.Sessions != nil && !r.Sessions.Learnt && math.Abs(worseBy(r)) > r.Threshold
}

// Improved reports whether the row's change is in its metric's better direction.
func (r *Row) Improved() bool { return directed(r.Better) && worseBy(r) < 0 }

// unresolvedRows lists the rows of rep that are Unresolved and improved (or not) as improved
// says, at most five and a count of the others, with the fewest stored runs and the most needed.
func unresolvedRows(rep *Report, improved bool) (n int, rows []string, runs, need int) {
	runs = math.MaxInt
	for i := range rep.Rows {
		x := &rep.Rows[i]
		if !x.Unresolved() || x.Improved() != improved {
			continue
		}
		n++
		runs, need = min(runs, x.Sessions.Runs), max(need, x.Sessions.Need)
		if len(rows) < 5 {
			rows = append(rows, fmt.Sprintf("%s %s %+.1f%% (threshold %g%%, p=%.3f n=%d+%d; the smallest change these sessions could have seen: at least %.1f%%)",
				x.ID(), x.Metric, x.Delta, x.Threshold, x.Q, x.OldN, x.NewN, max(x.Threshold, x.Sessions.DriftPct)))
		}
	}
	if n > len(rows) {
		rows = append(rows, fmt.Sprintf("%d more", n-len(rows)))
	}
	return n, rows, runs, need
}

// unresolved is Report.Unresolved's text for the worse rows of rep that are Unresolved: which
// changes, the smallest change the sessions could have seen, and what can tell now; "" when none
// is.
func unresolved(rep *Report) string {
	n, rows, runs, need := unresolvedRows(rep, false)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("not known: %d gated change(s) beyond their threshold between two sessions: %s. "+
		"The samples of one session say nothing of the machine's state in another, and the store holds %d of the %d sessions of this benchmark that learn this machine's run-to-run noise, "+
		"so the smallest change two sessions here can show is not known (at least the threshold, or where larger the drift of the block medians within one session). "+
		"What can tell now: `inferbench run BENCH --baseline-ref REF` (both sides interleaved in one job; the pytest plugin's `--inferbench-baseline-ref REF`) or instruction counts (`--measure instructions`; the pytest plugin's `--inferbench-measure instructions`); "+
		"%d more stored session(s) learn the noise (save each: the pytest plugin's --inferbench-save with --inferbench-store); --strict fails on it",
		n, strings.Join(rows, ", "), runs, need, max(1, need-runs))
}

// unresolvedBetter is the warning of rep's improvements that two sessions cannot tell
// (Report.UnknownImprovements); "" when there is none.
func unresolvedBetter(rep *Report) string {
	n, rows, runs, need := unresolvedRows(rep, true)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("not known: %d gated improvement(s) beyond their threshold between two sessions: %s; "+
		"the store holds %d of the %d sessions that learn this machine's run-to-run noise, so two sessions cannot tell them from it: not counted as improvements, and failing nothing, with --strict neither (docs/verdicts.md, \"Between sessions\")",
		n, strings.Join(rows, ", "), runs, need)
}
