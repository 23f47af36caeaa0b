package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// This file holds a metric row of a comparison: its type (Row), how scenarioRows computes the
// rows of one scenario (the center and its test, a row per tail percentile with its bootstrap
// test, the threshold), and how a row is judged (verdict).

// Verdicts of a metric row.
const (
	Regression  = "regression"  // significant and worse than the threshold
	Worse       = "worse"       // significant, worse, but within the threshold
	Unchanged   = "unchanged"   // not significant
	Better      = "better"      // significant, better, within the threshold
	Improvement = "improvement" // significant and better by more than the threshold
	Unverified  = "unverified"  // no samples to test: a single value of a gated metric worse than the threshold (a warning)
	// Info is a change worse than the threshold of a metric that does not gate (Row.Gated false:
	// not a primary metric of its scenario, nor named by --gate), significant or untested: shown
	// with its change as information, never a failure.
	Info    = "info"
	Unknown = "unknown" // no samples and within the threshold, or no delta (old is 0)
	// Changed is a significant change of a metric whose better direction is unknown (neither the
	// catalogue, its name nor its producer says): reported, never gated as a regression.
	Changed = "changed"
	// Disagree is a regression of a CPU-bound scenario's wall time that its CPU time does not
	// confirm, or the reverse (cpu.go, wallAgainstCPU): the machine moved, not the code. Shown,
	// never a failure.
	Disagree = "disagree"
	// Incomparable is a count of instruction mode made under another identity than the one it
	// is compared with (another valgrind, CPU or interpreter): not compared (counted.go).
	Incomparable = "incomparable"
)

// Row is one metric of one scenario, old against new.
type Row struct {
	Benchmark string `json:"benchmark"`
	Scenario  string `json:"scenario"`
	// Metric is a name ("latency_ms", compared at the median) or a name and tail percentile
	// ("latency_ms.p95").
	Metric string `json:"metric"`
	Unit   string `json:"unit"`
	Better string `json:"better"`
	Kind   Kind   `json:"kind"`
	// Primary rows are the metric spec's headline metrics (result.Primary) and the metrics a
	// benchmark reports itself; text output shows the others only on request.
	Primary bool `json:"primary"`
	// Gated rows can fail the comparison: the scenario's primary metrics (its definition's
	// gate:, else its subject kind's) and those --gate names (Config.Gated). The others are
	// information: beyond their threshold their verdict is Info.
	Gated bool `json:"gated"`

	Old   float64         `json:"old"`
	New   float64         `json:"new"`
	OldCI *stats.Interval `json:"old_ci,omitempty"`
	NewCI *stats.Interval `json:"new_ci,omitempty"`
	OldN  int             `json:"old_n"`
	NewN  int             `json:"new_n"`
	// Delta is (new/old - 1) in percent; NaN (null in JSON) when old is 0.
	Delta float64 `json:"delta_pct"`
	// DeltaCI is the bootstrap interval of the delta, in percent (tail rows).
	DeltaCI *stats.Interval `json:"delta_ci_pct,omitempty"`
	// P is the test's p-value, Q the Benjamini-Hochberg adjusted one; both NaN without a test.
	P      float64 `json:"p"`
	Q      float64 `json:"q"`
	Method string  `json:"method,omitempty"`
	// Significant: Q <= Alpha.
	Significant bool    `json:"significant"`
	Threshold   float64 `json:"threshold_pct"`
	// ThresholdRuns is how many stored runs' noise the threshold comes from (Config.History);
	// 0 when it is the default or an override.
	ThresholdRuns int      `json:"threshold_runs,omitempty"`
	Verdict       string   `json:"verdict"`
	Warnings      []string `json:"warnings,omitempty"`
	// FailingCertificate names the checks of the scenario's certificate that fail in either
	// run (result.Certificate): a change measured there is not plainly the server's (Uncertified).
	FailingCertificate []string `json:"failing_certificate,omitempty"`
	// TooFew is set on an Unverified row of a metric measured per iteration whose runs have too
	// few samples to be tested: under two a side, or fewer than the test needs to find any
	// change significant at the comparison's alpha (NeedSamples). Such a change fails the
	// comparison as undecided (Report.TooFew), not as a regression.
	TooFew bool `json:"too_few,omitempty"`
	// Sessions is set on a gated timed row of a comparison across sessions (Config.Sessions):
	// the stored runs and the drift that say what change two sessions can show.
	Sessions *SessionNoise `json:"sessions,omitempty"`
}

// ID returns "benchmark/scenario".
func (r *Row) ID() string { return r.Benchmark + "/" + r.Scenario }

// Failed reports whether the row fails the comparison: a regression of a gated metric (verdict
// only gives Regression to gated rows).
func (r *Row) Failed() bool { return r.Verdict == Regression && r.Gated }

// Change returns the row's relative change in percent, as every rendering prints it, or false
// and why there is none ("the old value is 0"): a page or table shows "?" and the reason, never
// NaN or an infinity.
func (r *Row) Change() (float64, bool, string) {
	switch {
	case math.IsNaN(r.Delta) || math.IsInf(r.Delta, 0):
		if r.Old == 0 {
			return 0, false, "the old value is 0: no relative change"
		}
		return 0, false, "no finite relative change"
	}
	return r.Delta, true, ""
}

// Mark is the row's standing in the verdict, the one every rendering shows: "fail" (a regression
// of a gated metric: the comparison fails), "untested" (a gated single value beyond its
// threshold: a warning), "unknown" (a gated change beyond its threshold, either way, that two
// sessions cannot tell from the machine's noise: Unresolved), "info" (beyond the threshold on a metric that does not gate),
// "improvement", or "" (nothing to flag). A wall/CPU disagreement (Disagree) is "info".
func (r *Row) Mark() string {
	switch {
	case r.Failed():
		return "fail"
	case r.Verdict == Unverified:
		return "untested"
	case r.Unresolved():
		return "unknown"
	case r.Verdict == Info, r.Verdict == Disagree:
		return "info"
	case r.Verdict == Improvement:
		return "improvement"
	}
	return ""
}

// MarshalJSON writes NaN as null.
func (r Row) MarshalJSON() ([]byte, error) {
	type plain Row
	type out struct {
		plain
		Delta *float64 `json:"delta_pct"`
		P     *float64 `json:"p"`
		Q     *float64 `json:"q"`
	}
	f := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return json.Marshal(out{plain(r), f(r.Delta), f(r.P), f(r.Q)})
}

// worseBy returns how much worse new is than old, in percent of old (negative when better).
func worseBy(r *Row) float64 {
	if r.Better == string(result.Higher) {
		return -r.Delta
	}
	return r.Delta
}

func directed(better string) bool {
	return better == string(result.Higher) || better == string(result.Lower)
}

// verdict judges a row: statistics first (verdictOf), then the gate: a row that does not gate is
// never a regression nor unverified, only information (Info); a regression or an improvement
// between two sessions whose run-to-run noise the store has not learnt is Unknown
// (Config.Sessions).
func verdict(r *Row) string {
	v := verdictOf(r)
	if !r.Gated && (v == Regression || v == Unverified) {
		return Info
	}
	if (v == Regression || v == Improvement) && r.Sessions != nil && !r.Sessions.Learnt {
		return Unknown
	}
	return v
}

// Note: a single value beyond its threshold used to fail for peak memory (memory_mb, peak_rss_mb),
// "a maximum, not a timing". A sampled peak of an exec subject was measured moving by +20-50%
// between unchanged runs (the fork's shared pages, the monitor's interval): one value cannot tell
// that from a regression. Single values now fail only through a budget.

func verdictOf(r *Row) string {
	if r.Verdict == Incomparable {
		return Incomparable
	}
	if r.Method == CountMethod {
		return countVerdict(r)
	}
	if math.IsNaN(r.Delta) {
		return Unknown
	}
	if !directed(r.Better) {
		switch {
		case math.IsNaN(r.P):
			return Unknown
		case r.Significant:
			return Changed
		}
		return Unchanged
	}
	w := worseBy(r)
	if math.IsNaN(r.P) || (r.TooFew && !r.Significant) { // no test possible, or none that could find it
		if w > r.Threshold {
			return Unverified
		}
		if math.IsNaN(r.P) {
			return Unknown
		}
	}
	return judged(r.Significant, w, r.Threshold)
}

// judged is the verdict of a change worse by w percent (negative: better) against threshold:
// unchanged unless significant, then regression or improvement beyond the threshold, worse or
// better within it.
func judged(significant bool, w, threshold float64) string {
	switch {
	case !significant:
		return Unchanged
	case w > threshold:
		return Regression
	case w > 0:
		return Worse
	case -w > threshold:
		return Improvement
	}
	return Better
}

func scenarioRows(o, n *result.Scenario, cfg Config) []Row {
	names := make([]string, 0, len(n.Metrics))
	for k := range n.Metrics {
		if _, ok := o.Metrics[k]; ok {
			names = append(names, k)
		}
	}
	// The metric spec's headline metrics first, then the rest, each by name.
	slices.SortFunc(names, func(a, b string) int {
		if pa, pb := result.Primary(a), result.Primary(b); pa != pb {
			if pa {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var rows []Row
	for _, name := range names {
		om, nm := o.Metrics[name], n.Metrics[name]
		unit := nm.Unit
		if unit == "" {
			unit = om.Unit
		}
		better, warn := direction(name, unit, om, nm)
		row := Row{
			Benchmark: n.Benchmark, Scenario: n.Scenario, Metric: name, Unit: unit, Better: better,
			Kind: KindOf(name), Primary: result.Primary(name), Gated: cfg.Gated(n, name), Threshold: cfg.Thresholds.For(n.Benchmark, name), P: math.NaN(), Q: math.NaN(),
		}
		// The user's own figures gate where their direction is known, unless the definition
		// lists what gates.
		if !row.Gated && len(n.Gate) == 0 && directed(better) && ownMetric(name) {
			row.Gated = true
		}
		if warn != "" {
			row.Warnings = append(row.Warnings, warn)
		}
		if why := incomparable(o, n, name); why != "" {
			rows = append(rows, refused(row, om, nm, why))
			continue
		}
		if row.Kind == Instructions && len(om.Samples) > 0 && len(nm.Samples) > 0 {
			rows = append(rows, countRow(row, om.Samples, nm.Samples))
			continue
		}
		if len(om.Samples) >= 2 && len(nm.Samples) >= 2 {
			var ow, nw []string
			row.Old, row.OldCI, ow = center(om.Samples)
			row.New, row.NewCI, nw = center(nm.Samples)
			row.OldN, row.NewN = len(om.Samples), len(nm.Samples)
			t := stats.MannWhitney(om.Samples, nm.Samples, cfg.Alpha)
			row.P, row.Method = t.P, t.Method
			row.Warnings = append(row.Warnings, t.Warnings...)
			row.Warnings = append(row.Warnings, ow...)
			row.Warnings = append(row.Warnings, nw...)
			if k := min(row.OldN, row.NewN); k < cfg.MinSamples {
				row.Warnings = append(row.Warnings, fmt.Sprintf("n=%d+%d: too few samples for a reliable verdict (want at least %d)", row.OldN, row.NewN, cfg.MinSamples))
			}
			// Samples with which the test cannot reach alpha, whatever the change (2 and 2:
			// p ≥ 0.33): a change beyond the threshold is undecided, not unchanged.
			row.TooFew = minP(row.OldN, row.NewN) > cfg.Alpha
			row.Delta = delta(row.Old, row.New)
			noiseThreshold(&row, o, n, cfg)
			rows = append(rows, row)
			for _, p := range cfg.Tails {
				if tr, ok := tailRow(row, om.Samples, nm.Samples, p, cfg); ok {
					tr.Gated = cfg.Gated(n, tr.Metric)
					noiseThreshold(&tr, o, n, cfg)
					rows = append(rows, tr)
				}
			}
			continue
		}
		ov, ok1 := om.Center()
		nv, ok2 := nm.Center()
		if !ok1 || !ok2 {
			continue
		}
		row.Old, row.New = ov, nv
		row.OldN, row.NewN = count(om), count(nm)
		row.Delta = delta(ov, nv)
		// A metric measured per iteration, of runs of fewer than two iterations: not a single
		// value by nature (a throughput, a summary imported without its rounds), but too few.
		row.TooFew = (len(om.Samples) > 0 || len(nm.Samples) > 0) && min(row.OldN, row.NewN) < 2
		capacityTest(&row, o, n)
		rows = append(rows, row)
	}
	gateCPU(rows, o, n, cfg)
	return rows
}

// capacityTest tests a capacity_rps row by the runs' one-sided 95% lower bounds
// (capacity_lower_rps): the new capacity is lower when its estimate is below the old run's bound,
// higher when its bound is above the old run's estimate, and unchanged otherwise. Each bound
// misses its capacity at most 5% of the time (docs/serving.md, "Capacity"). The bounds give no
// p-value: a row they find changed enters the false-discovery family as P 0.001, one they do not
// as P 1.
func capacityTest(r *Row, o, n *result.Scenario) {
	if r.Metric != "capacity_rps" {
		return
	}
	ol, ok1 := o.Metrics["capacity_lower_rps"].Center()
	nl, ok2 := n.Metrics["capacity_lower_rps"].Center()
	if !ok1 || !ok2 {
		return
	}
	r.Method = "capacity bounds"
	switch {
	case r.New < ol, nl > r.Old:
		r.P = 0.001
	default:
		r.P = 1
	}
}

// direction returns the better direction of a metric compared in two runs: the new run's record
// (the code under test declared it now), else the catalogue's or the name's (result.Lookup), else
// its unit's (unitDirection), which may be unknown. The old run's record is not used on its own:
// runs stored before directions could be unknown recorded "lower" for every name they did not
// know. Two runs that record different directions are warned about.
func direction(name, unit string, om, nm result.Metric) (string, string) {
	o, n := om.Better, nm.Better
	if !directed(n) {
		info, _ := result.Lookup(name)
		n = string(info.Better)
	}
	if !directed(n) {
		n = string(unitDirection(unit))
	}
	if directed(n) && directed(o) && n != o {
		return n, fmt.Sprintf("the old run records %s is better, the new run %s: judged by the new run's", o, n)
	}
	return n, ""
}

// unitDirection is the better direction a unit implies: lower for times, sizes and energy
// ("ms", "s", "MB", "J"), higher for rates ("items/s", "1/s", "tokens/s"); unknown otherwise (a
// count, a ratio, a percentage: accuracy and error rates alike).
func unitDirection(unit string) result.Direction {
	u := strings.TrimSpace(unit)
	switch {
	case u == "":
		return result.Unknown
	case strings.HasSuffix(u, "/s") || strings.HasSuffix(u, "/sec") || strings.HasSuffix(u, "per second"):
		return result.Higher
	}
	switch u {
	case "ns", "us", "µs", "ms", "s", "sec", "seconds", "min", "h",
		"B", "kB", "KB", "KiB", "MB", "MiB", "GB", "GiB", "bytes", "J", "kJ", "Wh", "kWh":
		return result.Lower
	}
	return result.Unknown
}

// noiseThreshold sets the threshold of a gated row with samples from the run-to-run noise of its
// scenario's stored runs (cfg.History, noiseOf), unless an override sets it; across sessions
// (cfg.Sessions) sessionThreshold does, override or not. o and s are the scenario's runs.
func noiseThreshold(r *Row, o, s *result.Scenario, cfg Config) {
	if cfg.Sessions {
		sessionThreshold(r, o, s, cfg)
		return
	}
	// Counts have no run-to-run noise to learn from: their threshold is CountThreshold.
	if cfg.History == nil || !r.Gated || !directed(r.Better) || r.Kind == Instructions {
		return
	}
	if _, set := cfg.Thresholds.Lookup(s.Benchmark, r.Metric); set {
		return
	}
	if n, ok := noiseOf(cfg.History(s, r.Metric), cfg.MinHistory); ok {
		r.Threshold, r.ThresholdRuns = n.ThresholdPct, n.Runs
	}
}

// minP is the smallest two-sided p-value the Mann-Whitney test gives samples of n and m values:
// 2 / C(n+m, n), when the two samples do not overlap at all.
func minP(n, m int) float64 {
	if n < 1 || m < 1 {
		return 1
	}
	c := 1.0
	for i := 1; i <= n; i++ {
		c = c * float64(m+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// NeedSamples returns the fewest samples a side with which the comparison's test can find a
// change significant at alpha (4 at 0.05, 5 at 0.01): with fewer, no change is ever significant.
func NeedSamples(alpha float64) int {
	for k := 2; k < 1000; k++ {
		if minP(k, k) <= alpha {
			return k
		}
	}
	return 1000
}

func count(m result.Metric) int {
	if m.Summary != nil {
		return m.Summary.N
	}
	if m.Value != nil {
		return 1
	}
	return 0
}

// minTailSamples is the smallest sample whose p-th percentile is compared: five points beyond it.
func minTailSamples(p float64) int { return int(math.Ceil(5 / (1 - p/100))) }

func tailRow(base Row, old, new []float64, p float64, cfg Config) (Row, bool) {
	need := minTailSamples(p)
	if len(old) < need || len(new) < need {
		return Row{}, false
	}
	name := base.Metric + ".p" + strconv.FormatFloat(p, 'f', -1, 64)
	b := cfg.Bootstrap
	ratio, ci, t, ok := b.RatioTest(old, new, p/100)
	if !ok {
		return Row{}, false
	}
	r := base
	r.Metric = name
	r.Warnings = nil
	r.OldCI, r.NewCI = nil, nil
	r.Old = quantile(old, p/100)
	r.New = quantile(new, p/100)
	r.Delta = (ratio - 1) * 100
	r.DeltaCI = &stats.Interval{Lo: (ci.Lo - 1) * 100, Hi: (ci.Hi - 1) * 100, Confidence: ci.Confidence}
	r.P, r.Method = t.P, t.Method
	r.Threshold, r.ThresholdRuns, r.Sessions = cfg.Thresholds.For(base.Benchmark, name), 0, nil
	return r, true
}

func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return stats.Quantile(s, q)
}

func center(xs []float64) (float64, *stats.Interval, []string) {
	c, ci, w := stats.MedianInterval(xs, 0.95)
	return c, &ci, w
}

func delta(old, new float64) float64 {
	if old == 0 {
		if new == 0 {
			return 0
		}
		return math.NaN()
	}
	return (new/old - 1) * 100
}
