// Package compare decides whether a run regressed against another: it matches scenarios by
// benchmark and parameters, tests every metric both runs have (Mann-Whitney U on the samples for
// the center, bootstrap ratios for tail percentiles), controls false discoveries across all the
// tests of a comparison (Benjamini-Hochberg), and calls a change a regression only when it is both
// significant and worse than the metric's threshold. Budgets are checked on the new run alone.
//
// compare imports no database or network code; the store and the CLI feed it runs.
package compare

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

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
)

// Config is how a comparison is judged. The zero value is the default: FDR 5%, default
// thresholds, tail percentiles from 100 (p95) and 500 (p99) samples.
type Config struct {
	// Alpha is the false discovery rate across all tests of the comparison (default 0.05).
	Alpha float64
	// Thresholds per metric, kind and benchmark (DefaultThresholds when empty).
	Thresholds Thresholds
	// MinSamples: fewer samples on either side gives a warning (default 10).
	MinSamples int
	// Tails are the percentiles compared by bootstrap besides the median (default 95 and 99).
	Tails []float64
	// Budgets from a performance-budget.yml, applied on top of each scenario's own.
	Budgets *BudgetFile
	// Bootstrap settings (deterministic by default).
	Bootstrap stats.Bootstrap
	// Gate names metrics that fail the comparison besides each scenario's primary metrics
	// (PrimaryMetrics): "METRIC", "METRIC.p95", "BENCHMARK:METRIC" or GateAll, as --gate gives
	// them (ParseGate). See Gated.
	Gate []string
	// History, when set, gives the stored runs of a scenario: a gated metric with samples whose
	// threshold no override sets gets its threshold from their run-to-run noise (NoiseOf) once
	// there are MinHistory of them (default MinHistoryRuns), and its row says so (ThresholdRuns).
	History    History
	MinHistory int
}

func (c Config) norm() Config {
	if c.Alpha <= 0 {
		c.Alpha = stats.DefaultAlpha
	}
	if c.MinSamples <= 0 {
		c.MinSamples = 10
	}
	if c.Tails == nil {
		c.Tails = []float64{95, 99}
	}
	return c
}

// RunRef identifies a compared run.
type RunRef struct {
	ID        string    `json:"id"`
	Label     string    `json:"label,omitempty"` // how it was named: a path, "baseline:main"
	StartedAt time.Time `json:"started_at,omitzero"`
	Commit    string    `json:"commit,omitempty"`
}

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
// threshold: a warning), "info" (beyond the threshold on a metric that does not gate),
// "improvement", or "" (nothing to flag).
func (r *Row) Mark() string {
	switch {
	case r.Failed():
		return "fail"
	case r.Verdict == Unverified:
		return "untested"
	case r.Verdict == Info:
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

// BudgetCheck is one budget of one scenario of the new run.
type BudgetCheck struct {
	Benchmark string  `json:"benchmark"`
	Scenario  string  `json:"scenario"`
	Metric    string  `json:"metric"` // "latency_ms.p95"
	Op        string  `json:"op"`
	Limit     float64 `json:"limit"`
	Actual    float64 `json:"actual"`
	Measured  bool    `json:"measured"` // false: the metric was not in the run
	OK        bool    `json:"ok"`
	Source    string  `json:"source"` // "definition" or the budget file
	// Against is the denominator scenario of a ratio budget (ratio(a/b).metric), whose Scenario
	// is the numerator; CI is the ratio's bootstrap 95% interval when both kept samples.
	Against string          `json:"against,omitempty"`
	CI      *stats.Interval `json:"ci,omitempty"`
}

// Report is the outcome of a comparison.
type Report struct {
	Old      RunRef        `json:"old"`
	New      RunRef        `json:"new"`
	Alpha    float64       `json:"alpha"`
	Rows     []Row         `json:"rows"`
	Budgets  []BudgetCheck `json:"budgets,omitempty"`
	OnlyOld  []string      `json:"only_old,omitempty"` // scenarios without a match in the new run
	OnlyNew  []string      `json:"only_new,omitempty"`
	Warnings []string      `json:"warnings,omitempty"`
	// Counts.
	Regressions  int `json:"regressions"`
	Improvements int `json:"improvements"`
	Unverified   int `json:"unverified"` // single values of gated metrics beyond their threshold, not tested
	// Info counts the rows of metrics that do not gate whose change is beyond their threshold
	// (verdict Info): shown, never failing.
	Info            int `json:"info"`
	BudgetsExceeded int `json:"budgets_exceeded"`
	// NoEvidence says why nothing was compared when the two runs have no metric in common: the
	// new run measured nothing, every scenario failed, or no scenario matched the old run's (a
	// typo in --set, a renamed parameter). Such a comparison fails: it is never "ok".
	NoEvidence string `json:"no_evidence,omitempty"`
}

// Failed reports whether the comparison should fail a CI job: a regression, an exceeded budget,
// or nothing comparable (NoEvidence).
func (r *Report) Failed() bool {
	return r.Regressions > 0 || r.BudgetsExceeded > 0 || r.NoEvidence != ""
}

// noEvidence returns why a comparison of old and new with no row found nothing comparable.
func noEvidence(old, new *result.Run, pairs int) string {
	okOf := func(r *result.Run) (ok int) {
		for i := range r.Scenarios {
			if r.Scenarios[i].Status == result.StatusOK {
				ok++
			}
		}
		return ok
	}
	side := func(name string, r *result.Run) string {
		switch {
		case len(r.Scenarios) == 0 && r.Partial:
			return fmt.Sprintf("the %s run %s measured nothing: it is partial (interrupted) with no scenario", name, r.ID)
		case len(r.Scenarios) == 0:
			return fmt.Sprintf("the %s run %s has no scenario", name, r.ID)
		case okOf(r) == 0:
			var failed, skipped int
			for i := range r.Scenarios {
				switch r.Scenarios[i].Status {
				case result.StatusFailed:
					failed++
				case result.StatusSkipped:
					skipped++
				}
			}
			return fmt.Sprintf("no scenario of the %s run %s succeeded (%d failed, %d skipped)", name, r.ID, failed, skipped)
		}
		return ""
	}
	if why := side("new", new); why != "" {
		return why
	}
	if why := side("old", old); why != "" {
		return why
	}
	if pairs == 0 {
		return fmt.Sprintf("no scenario of the new run %s matches one of the old run %s (new: %s; old: %s): a typo in --set or a renamed parameter?",
			new.ID, old.ID, examples(new), examples(old))
	}
	return fmt.Sprintf("the %d matched scenario(s) of %s and %s have no metric in common", pairs, old.ID, new.ID)
}

// examples names a run's first scenarios for a message.
func examples(r *result.Run) string {
	var ids []string
	for i := range r.Scenarios {
		if len(ids) == 2 {
			ids = append(ids, fmt.Sprintf("and %d more", len(r.Scenarios)-2))
			break
		}
		ids = append(ids, r.Scenarios[i].ID())
	}
	return strings.Join(ids, ", ")
}

// Key returns the matching key of a scenario: its benchmark and its parameters in canonical
// form; the scenario name when it has no parameters.
func Key(s *result.Scenario) string {
	if len(s.Params) == 0 {
		return s.Benchmark + "\x00" + s.Scenario
	}
	keys := slices.Sorted(maps.Keys(s.Params))
	var b strings.Builder
	b.WriteString(s.Benchmark)
	for _, k := range keys {
		v, _ := json.Marshal(s.Params[k])
		b.WriteByte(0)
		b.WriteString(k)
		b.WriteByte('=')
		b.Write(v)
	}
	return b.String()
}

// Runs compares new against old.
func Runs(old, new *result.Run, cfg Config) *Report {
	cfg = cfg.norm()
	rep := &Report{Old: ref(old), New: ref(new), Alpha: cfg.Alpha}
	rep.Warnings = append(rep.Warnings, EnvironmentDiff(old.Environment, new.Environment)...)
	if old.Partial {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("old run %s is partial (interrupted)", old.ID))
	}
	if new.Partial {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("new run %s is partial (interrupted)", new.ID))
	}

	oldBy := make(map[string]*result.Scenario, len(old.Scenarios))
	for i := range old.Scenarios {
		oldBy[Key(&old.Scenarios[i])] = &old.Scenarios[i]
	}
	type pair struct{ o, n *result.Scenario }
	var pairs []pair
	seen := make(map[string]bool, len(new.Scenarios))
	for i := range new.Scenarios {
		n := &new.Scenarios[i]
		k := Key(n)
		seen[k] = true
		if o, ok := oldBy[k]; ok {
			if o.Status == result.StatusOK && n.Status == result.StatusOK {
				pairs = append(pairs, pair{o, n})
			} else if n.Status != result.StatusSkipped || o.Status != result.StatusSkipped {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: not compared (old %s, new %s)", n.ID(), o.Status, n.Status))
			}
		} else {
			rep.OnlyNew = append(rep.OnlyNew, n.ID())
		}
	}
	for i := range old.Scenarios {
		if !seen[Key(&old.Scenarios[i])] {
			rep.OnlyOld = append(rep.OnlyOld, old.Scenarios[i].ID())
		}
	}

	// Scenarios are independent: compare them in parallel, keeping the order.
	rowsOf := make([][]Row, len(pairs))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rowsOf[i] = scenarioRows(pairs[i].o, pairs[i].n, cfg)
			}
		}()
	}
	for i := range pairs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, rs := range rowsOf {
		rep.Rows = append(rep.Rows, rs...)
	}
	var undirected []string
	for i := range rep.Rows {
		if r := &rep.Rows[i]; !directed(r.Better) && !strings.Contains(r.Metric, ".") {
			undirected = append(undirected, r.ID()+" "+r.Metric)
		}
	}
	if len(undirected) > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%d metric(s) have no known better direction and are reported, not gated: %s; declare it where the metric is produced (definition `metrics: {NAME: {better: higher}}`, the worker's or the command's JSON)", len(undirected), strings.Join(undirected, ", ")))
	}
	untested := 0
	for i := range rep.Rows {
		if math.IsNaN(rep.Rows[i].P) {
			untested++
		}
	}
	if untested > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%d metric(s) have a single value and no samples: they are not tested and never fail a comparison (a budget bounds them); a change beyond the threshold shows as \"unverified\"", untested))
	}

	// One family: every tested row of the comparison.
	var ps []float64
	var idx []int
	for i := range rep.Rows {
		if !math.IsNaN(rep.Rows[i].P) {
			ps = append(ps, rep.Rows[i].P)
			idx = append(idx, i)
		}
	}
	for j, q := range stats.BenjaminiHochberg(ps) {
		r := &rep.Rows[idx[j]]
		r.Q = q
		r.Significant = q <= cfg.Alpha
	}
	for i := range rep.Rows {
		r := &rep.Rows[i]
		r.Verdict = verdict(r)
		switch r.Verdict {
		case Regression:
			rep.Regressions++
		case Unverified:
			rep.Unverified++
		case Info:
			rep.Info++
		case Improvement:
			rep.Improvements++
		}
	}

	rep.Budgets, rep.BudgetsExceeded = CheckRunBudgets(new, cfg.Budgets)
	if len(rep.Rows) == 0 {
		rep.NoEvidence = noEvidence(old, new, len(pairs))
	}
	return rep
}

func ref(r *result.Run) RunRef {
	rr := RunRef{ID: r.ID, StartedAt: r.StartedAt}
	if g, ok := r.Environment["git"].(map[string]any); ok {
		rr.Commit, _ = g["commit"].(string)
	}
	return rr
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
// never a regression nor unverified, only information (Info).
func verdict(r *Row) string {
	v := verdictOf(r)
	if !r.Gated && (v == Regression || v == Unverified) {
		return Info
	}
	return v
}

// Note: a single value beyond its threshold used to fail for peak memory (memory_mb, peak_rss_mb),
// "a maximum, not a timing". Issue 22 measured a sampled peak of an exec subject moving by +20-50%
// between unchanged runs (the fork's shared pages, the monitor's interval): one value cannot tell
// that from a regression. Single values now fail only through a budget.

func verdictOf(r *Row) string {
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
	if math.IsNaN(r.P) { // no test possible
		if w > r.Threshold {
			return Unverified
		}
		return Unknown
	}
	switch {
	case !r.Significant:
		return Unchanged
	case w > r.Threshold:
		return Regression
	case w > 0:
		return Worse
	case -w > r.Threshold:
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
		better, warn := direction(name, om, nm)
		unit := nm.Unit
		if unit == "" {
			unit = om.Unit
		}
		row := Row{
			Benchmark: n.Benchmark, Scenario: n.Scenario, Metric: name, Unit: unit, Better: better,
			Kind: KindOf(name), Primary: result.Primary(name), Gated: cfg.Gated(n, name), Threshold: cfg.Thresholds.For(n.Benchmark, name), P: math.NaN(), Q: math.NaN(),
		}
		if warn != "" {
			row.Warnings = append(row.Warnings, warn)
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
			row.Delta = delta(row.Old, row.New)
			noiseThreshold(&row, n, cfg)
			rows = append(rows, row)
			for _, p := range cfg.Tails {
				if tr, ok := tailRow(row, om.Samples, nm.Samples, p, cfg); ok {
					tr.Gated = cfg.Gated(n, tr.Metric)
					noiseThreshold(&tr, n, cfg)
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
		rows = append(rows, row)
	}
	return rows
}

// direction returns the better direction of a metric compared in two runs: the new run's record
// (the code under test declared it now), else the catalogue's or the name's (result.Lookup),
// which may be unknown. The old run's record is not used on its own: runs stored before
// directions could be unknown recorded "lower" for every name they did not know. Two runs that
// record different directions are warned about.
func direction(name string, om, nm result.Metric) (string, string) {
	o, n := om.Better, nm.Better
	if !directed(n) {
		info, _ := result.Lookup(name)
		n = string(info.Better)
	}
	if directed(n) && directed(o) && n != o {
		return n, fmt.Sprintf("the old run records %s is better, the new run %s: judged by the new run's", o, n)
	}
	return n, ""
}

// noiseThreshold sets the threshold of a gated row with samples from the run-to-run noise of its
// scenario's stored runs (cfg.History, NoiseOf), unless an override sets it.
func noiseThreshold(r *Row, s *result.Scenario, cfg Config) {
	if cfg.History == nil || !r.Gated || !directed(r.Better) {
		return
	}
	if _, set := cfg.Thresholds.Lookup(s.Benchmark, r.Metric); set {
		return
	}
	if n, ok := NoiseOf(cfg.History(s, r.Metric), cfg.MinHistory); ok {
		r.Threshold, r.ThresholdRuns = n.ThresholdPct, n.Runs
	}
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

// MinTailSamples is the smallest sample whose p-th percentile is compared: five points beyond it.
func MinTailSamples(p float64) int { return int(math.Ceil(5 / (1 - p/100))) }

func tailRow(base Row, old, new []float64, p float64, cfg Config) (Row, bool) {
	need := MinTailSamples(p)
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
	r.Threshold, r.ThresholdRuns = cfg.Thresholds.For(base.Benchmark, name), 0
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

// EnvironmentDiff lists the differences between two environment fingerprints that make timings
// incomparable: CPU model and count, memory, GPU models, driver and CUDA versions, OS and arch.
func EnvironmentDiff(old, new map[string]any) []string {
	var out []string
	check := func(what string, get func(map[string]any) string) {
		a, b := get(old), get(new)
		if a != b && a != "" && b != "" {
			out = append(out, fmt.Sprintf("different %s: %s (old) vs %s (new): timings may not be comparable", what, a, b))
		}
	}
	str := func(keys ...string) func(map[string]any) string {
		return func(m map[string]any) string {
			var cur any = m
			for _, k := range keys {
				mm, ok := cur.(map[string]any)
				if !ok {
					return ""
				}
				cur = mm[k]
			}
			if cur == nil {
				return ""
			}
			return fmt.Sprint(cur)
		}
	}
	gpus := func(field string) func(map[string]any) string {
		return func(m map[string]any) string {
			list, _ := m["gpus"].([]any)
			var parts []string
			for _, g := range list {
				if gm, ok := g.(map[string]any); ok {
					parts = append(parts, fmt.Sprint(gm[field]))
				}
			}
			if len(parts) == 0 && field == "name" && m != nil {
				return "none"
			}
			return strings.Join(parts, ", ")
		}
	}
	check("CPU", str("cpu", "model"))
	check("CPU count", str("cpu", "cores"))
	check("memory (MB)", str("memory_mb"))
	check("GPU", gpus("name"))
	check("GPU driver", gpus("driver"))
	check("CUDA", gpus("cuda"))
	check("OS", str("os"))
	check("architecture", str("arch"))
	return out
}
