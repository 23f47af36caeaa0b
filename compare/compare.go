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
	"strings"
	"sync"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// This file holds the comparison of two runs: its Config, its outcome (Report), and Runs, which
// matches their scenarios by Key, compares each pair (rows.go), controls the false discoveries
// across all rows and counts the verdicts; noEvidence says why nothing was comparable. budget.go
// holds the budgets, gate.go which rows gate, config.go the thresholds.

// Config is how a comparison is judged. The zero value is the default: FDR 5%, default
// thresholds, tail percentiles from 100 (p95) and 500 (p99) samples.
type Config struct {
	// Alpha is the false discovery rate across all tests of the comparison (default 0.05).
	Alpha float64
	// Thresholds per metric, kind and benchmark (defaultThresholds when empty).
	Thresholds Thresholds
	// MinSamples: fewer samples on either side gives a warning (default 10).
	MinSamples int
	// Tails are the percentiles compared by bootstrap besides the median (default 95 and 99).
	Tails []float64
	// Budgets from a performance-budget.yml, applied on top of each scenario's own.
	Budgets *BudgetFile
	// Bootstrap settings (deterministic by default).
	Bootstrap stats.Bootstrap
	// Gate names metrics that fail the comparison besides each scenario's primary metrics (its
	// definition's gate list, else its subject kind's): "METRIC", "METRIC.p95",
	// "BENCHMARK:METRIC" or GateAll, as --gate gives them. See Gated.
	Gate []string
	// History, when set, gives the stored runs of a scenario: a gated metric with samples whose
	// threshold no override sets gets its threshold from their run-to-run noise (noiseOf) once
	// there are MinHistory of them (default MinHistoryRuns), and its row says so (ThresholdRuns).
	History    History
	MinHistory int
	// Strict fails the comparison on a gated change beyond its threshold that could not be
	// tested (Unverified: one value a side), as --strict asks; without it such a change is a
	// warning in the verdict's headline.
	Strict bool
	// Uncorrected judges each test by its own p-value at Alpha, as benchstat does
	// (--uncorrected): no false discovery rate control across the comparison's tests, so a
	// session of many scenarios reports more changes by chance. Each row's Q is then its P.
	Uncorrected bool
	// Sessions says the two runs were measured in separate sessions (processes, jobs: a saved
	// pytest session and this one), so a timed metric's within-run test is no evidence of a
	// change between them (sessions.go). A gated row tested on its samples, counts aside, is
	// judged against the run-to-run noise of the scenario's stored runs (History, MinHistory of
	// them): its threshold is the larger of its own and the noise's, and the verdict stands.
	// Without that history a change beyond the threshold is Unknown, either way: a worse one
	// (Report.Unknown, with Report.Unresolved saying why and what can tell) is not a
	// regression, and Strict fails it; a better one (Report.UnknownImprovements) is not an
	// improvement, and fails nothing.
	Sessions bool
}

// Uncorrected is Report.Correction of a comparison made with Config.Uncorrected.
const Uncorrected = "uncorrected"

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
	// Regressions, Improvements and Unverified count the rows of those verdicts.
	Regressions  int `json:"regressions"`
	Improvements int `json:"improvements"`
	Unverified   int `json:"unverified"` // single values of gated metrics beyond their threshold, not tested
	// Unknown counts the gated changes beyond their threshold between two sessions that the
	// sessions cannot tell from the machine's run-to-run noise (Config.Sessions, Row.Unresolved);
	// Unresolved says which, the smallest change the sessions could have seen, and what can tell.
	// A paired run (run --baseline-ref, ab) counts here too its gated changes whose sequential
	// answer is unknown, and Unresolved names them with their answers.
	Unknown    int    `json:"unknown,omitempty"`
	Unresolved string `json:"unresolved,omitempty"`
	// UnknownImprovements counts the gated improvements beyond their threshold that two
	// sessions cannot tell (Row.Unresolved and Row.Improved): not improvements, and failing
	// nothing, with Strict neither; a warning names them.
	UnknownImprovements int `json:"unknown_improvements,omitempty"`
	// Info counts the rows of metrics that do not gate whose change is beyond their threshold
	// (verdict Info): shown, never failing.
	Info int `json:"info"`
	// Disagreements counts the rows of CPU-bound scenarios whose wall time and CPU time disagree
	// (verdict Disagree): the machine moved, not the code. Shown, never failing.
	Disagreements   int `json:"disagreements,omitempty"`
	BudgetsExceeded int `json:"budgets_exceeded"`
	// NoEvidence says why nothing was compared when the two runs have no metric in common: the
	// new run measured nothing, every scenario failed, or no scenario matched the old run's (a
	// typo in --set, a renamed parameter). Such a comparison fails: it is never "ok".
	NoEvidence string `json:"no_evidence,omitempty"`
	// Strict is Config.Strict: an Unverified change fails the comparison.
	Strict bool `json:"strict,omitempty"`
	// Correction says how Alpha is shared across the tests when it is not the false discovery
	// rate of Benjamini-Hochberg: a paired run's "Bonferroni over 3 scenarios and each one's looks".
	Correction string `json:"correction,omitempty"`
	// StrictUnverified counts the Unverified changes that fail the comparison: all of them
	// with Strict, else those of scenarios whose definition says `strict: true`.
	StrictUnverified int `json:"strict_unverified,omitempty"`
	// TooFew counts the Unverified rows with too few samples to be tested (Row.TooFew): the
	// comparison is then undecided, an error (exit 1) rather than a pass, unless it fails
	// anyway. Need is the fewest samples a side that can be tested at the comparison's alpha.
	TooFew int `json:"too_few,omitempty"`
	Need   int `json:"need_samples,omitempty"`
	// Certificates are the scenarios whose runs' certificates differ in a failing check
	// (result.Certificate), one line each: the headline says so.
	Certificates []string `json:"certificates,omitempty"`
	// NewCertificates are the new run's certificates that do not pass, one line per compared
	// scenario ("ID: certificate fail: ..."), shown first in a pull request's summary.
	NewCertificates []string `json:"new_certificates,omitempty"`
}

// Undecided returns why a comparison that did not fail cannot pass: gated changes beyond their
// threshold measured with too few samples to be tested (TooFew), named with their samples and
// how many are needed; "" when there are none.
func (r *Report) Undecided() string {
	if r.TooFew == 0 {
		return ""
	}
	var rows []string
	for i := range r.Rows {
		if x := &r.Rows[i]; x.TooFew && x.Verdict == Unverified {
			if len(rows) == 5 {
				rows = append(rows, fmt.Sprintf("%d more", r.TooFew-5))
				break
			}
			rows = append(rows, fmt.Sprintf("%s %s %+.1f%% (threshold %g%%) with %d and %d samples", x.ID(), x.Metric, x.Delta, x.Threshold, x.OldN, x.NewN))
		}
	}
	return fmt.Sprintf("too few samples to test: %d gated change(s) beyond their threshold cannot be tested: %s; the test needs at least %d samples a side to find a change (measure more iterations: --iterations %d or more, or keep the samples: no --keep-samples below it)",
		r.TooFew, strings.Join(rows, ", "), r.Need, max(r.Need, 10))
}

// prefixCacheGap is the difference, in points, between two runs' prefix-cache hit rates beyond
// which a comparison warns: one run read the server's cache and the other did not (a warm cache
// from an earlier run, a workload whose prefixes changed), and its latencies and throughput say so.
const prefixCacheGap = 5.0

// prefixCacheWarning warns when the server reported different prefix-cache hit rates
// (server_prefix_cache_hit_pct, from its own metrics) in the two runs of a scenario.
func prefixCacheWarning(o, n *result.Scenario) string {
	hit := func(s *result.Scenario) (float64, bool) {
		if s.Extra.Resources == nil {
			return 0, false
		}
		for _, a := range s.Extra.Resources.Metrics {
			if a.Name == "server_prefix_cache_hit_pct" && a.N > 0 {
				return a.Last, true
			}
		}
		return 0, false
	}
	oh, ok1 := hit(o)
	nh, ok2 := hit(n)
	if !ok1 || !ok2 || math.Abs(oh-nh) <= prefixCacheGap {
		return ""
	}
	return fmt.Sprintf("%s: the server's prefix-cache hit rate was %.1f%% in the old run and %.1f%% in the new: one run read prompts the cache held (a warm cache from an earlier run, a changed workload), and its latencies and throughput show it, not the code (docs/serving.md, cache_key)", n.ID(), oh, nh)
}

// Failed reports whether the comparison should fail a CI job: a regression, an exceeded budget,
// nothing comparable (NoEvidence), or with Strict (or a strict definition's scenario) an
// untested change beyond its threshold; with Strict, a change two sessions cannot tell (Unknown).
func (r *Report) Failed() bool {
	return r.Regressions > 0 || r.BudgetsExceeded > 0 || r.NoEvidence != "" || (r.Strict && (r.Unverified > 0 || r.Unknown > 0)) || r.StrictUnverified > 0
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

// Shared returns why a run cannot be compared: two of its scenarios share one matching key (Key:
// the benchmark and the parameters) while they are different scenarios (different names or
// sources), so a comparison would pair one with the other's baseline. "" when every key is
// its scenario's own. Before, a parameter masked as a secret made pint's 104 tests 36 keys, and
// 86 were compared with another test's baseline without a word.
func Shared(r *result.Run) string {
	by := make(map[string]*result.Scenario, len(r.Scenarios))
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		k := Key(s)
		o, ok := by[k]
		if !ok {
			by[k] = s
			continue
		}
		if o.Scenario == s.Scenario && o.Source == s.Source {
			continue // the same scenario twice (a merged shard's retry): one identity
		}
		name := func(x *result.Scenario) string {
			if x.Source != "" && x.Source != x.ID() {
				return x.ID() + " (" + x.Source + ")"
			}
			return x.ID()
		}
		params, _ := json.Marshal(s.Params)
		return fmt.Sprintf("the run %s has different scenarios with one matching key (benchmark %q, parameters %s): %s and %s; "+
			"compare matches scenarios by benchmark and parameters and would pair one with the other's baseline, so it compares nothing "+
			"(a parameter masked as a secret? declare only real secrets: --secret-param)", r.ID, s.Benchmark, params, name(o), name(s))
	}
	return ""
}

// recorded returns cfg with the thresholds the scenario's runs were gated with where they were
// measured (result.Scenario.Thresholds: the new run's, else the old's), which judge the metrics
// cfg's own (--threshold, the thresholds file) say nothing of: a saved pytest session compared
// by hand judges as the plugin did (5%, not compare's default 15%).
func recorded(cfg Config, o, n *result.Scenario) Config {
	if rec := n.Thresholds; len(rec) > 0 {
		cfg.Thresholds.Recorded = rec
	} else if len(o.Thresholds) > 0 {
		cfg.Thresholds.Recorded = o.Thresholds
	}
	return cfg
}

// Runs compares new against old. A run two of whose scenarios share a matching key (Shared) is
// not compared: the report's NoEvidence says why.
func Runs(old, new *result.Run, cfg Config) *Report {
	cfg = cfg.norm()
	rep := &Report{Old: ref(old), New: ref(new), Alpha: cfg.Alpha}
	for _, r := range []*result.Run{new, old} {
		if why := Shared(r); why != "" {
			rep.NoEvidence = why
			return rep
		}
	}
	rep.Warnings = append(rep.Warnings, environmentDiff(old.Environment, new.Environment)...)
	if old.Partial {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("old run %s is partial (interrupted)", old.ID))
	}
	if new.Partial {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("new run %s is partial (interrupted)", new.ID))
	}

	pairs, failingCert := pairScenarios(rep, old, new)
	rowsOf := compareScenarios(pairs, cfg)
	for _, rs := range rowsOf {
		rep.Rows = append(rep.Rows, rs...)
	}
	markCertified(rep.Rows, failingCert)
	warnUnjudged(rep)
	judgeRows(rep, cfg)
	// A CPU-bound scenario's wall time and CPU time are judged together (cpu.go).
	at := 0
	for i, rs := range rowsOf {
		wallAgainstCPU(rep.Rows[at:at+len(rs)], pairs[i].o, pairs[i].n, cfg)
		at += len(rs)
	}
	countVerdicts(rep, rowsOf, pairs, cfg)
	rep.Budgets, rep.BudgetsExceeded = CheckRunBudgets(new, cfg.Budgets)
	if len(rep.Rows) == 0 {
		rep.NoEvidence = noEvidence(old, new, len(pairs))
	}
	return rep
}

// scenarioPair is a scenario of the old run and the new run's of the same matching key, both
// measured.
type scenarioPair struct{ o, n *result.Scenario }

// pairScenarios pairs the new run's scenarios with the old's by matching key (Key), in the new
// run's order, and notes in rep what stands apart: the scenarios only one run has, those not
// compared because one side did not run, and the pairs' certificates and prefix-cache warnings.
// It returns the pairs and, by scenario, the metrics whose certificate failed.
func pairScenarios(rep *Report, old, new *result.Run) ([]scenarioPair, map[string][]string) {
	oldBy := make(map[string]*result.Scenario, len(old.Scenarios))
	for i := range old.Scenarios {
		oldBy[Key(&old.Scenarios[i])] = &old.Scenarios[i]
	}
	var pairs []scenarioPair
	seen := make(map[string]bool, len(new.Scenarios))
	failingCert := map[string][]string{}
	for i := range new.Scenarios {
		n := &new.Scenarios[i]
		k := Key(n)
		seen[k] = true
		if o, ok := oldBy[k]; ok {
			if o.Status == result.StatusOK && n.Status == result.StatusOK {
				pairs = append(pairs, scenarioPair{o, n})
				var differ string
				failingCert[n.ID()], differ = certifiedPair(o, n)
				if differ != "" {
					rep.Certificates = append(rep.Certificates, differ)
				}
				if c := n.Extra.Certificate; c != nil && c.Verdict != result.CertPass {
					rep.NewCertificates = append(rep.NewCertificates, n.ID()+": "+c.Line())
				}
				if w := prefixCacheWarning(o, n); w != "" {
					rep.Warnings = append(rep.Warnings, w)
				}
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
	return pairs, failingCert
}

// compareScenarios returns each pair's rows, in the pairs' order. Scenarios are independent:
// they are compared in parallel.
func compareScenarios(pairs []scenarioPair, cfg Config) [][]Row {
	rowsOf := make([][]Row, len(pairs))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rowsOf[i] = scenarioRows(pairs[i].o, pairs[i].n, recorded(cfg, pairs[i].o, pairs[i].n))
			}
		}()
	}
	for i := range pairs {
		next <- i
	}
	close(next)
	wg.Wait()
	return rowsOf
}

// warnUnjudged warns of the rows that cannot fail a comparison: metrics with no known better
// direction, instruction counts that could not be compared, and single values with no samples.
func warnUnjudged(rep *Report) {
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
		if r := &rep.Rows[i]; r.Verdict == Incomparable {
			if r.Metric == result.InstructionsMetric {
				rep.Warnings = append(rep.Warnings, r.ID()+": instructions "+r.Warnings[len(r.Warnings)-1])
			}
		} else if math.IsNaN(r.P) && r.Method != CountMethod {
			untested++
		}
	}
	if untested > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%d metric(s) have a single value and no samples: they are not tested and never fail a comparison (a budget bounds them); a change beyond the threshold shows as \"unverified\"", untested))
	}
}

// judgeRows corrects the rows' p-values as one family, every tested row of the comparison
// (Benjamini-Hochberg, unless cfg.Uncorrected), and gives each row its verdict.
func judgeRows(rep *Report, cfg Config) {
	var ps []float64
	var idx []int
	for i := range rep.Rows {
		if !math.IsNaN(rep.Rows[i].P) {
			ps = append(ps, rep.Rows[i].P)
			idx = append(idx, i)
		}
	}
	qs := stats.BenjaminiHochberg(ps)
	if cfg.Uncorrected {
		qs = ps
		rep.Correction = Uncorrected
	}
	for j, q := range qs {
		r := &rep.Rows[idx[j]]
		r.Q = q
		r.Significant = q <= cfg.Alpha
	}
	for i := range rep.Rows {
		r := &rep.Rows[i]
		r.Verdict = verdict(r)
	}
}

// countVerdicts counts the rows by verdict into rep, with the samples too few rows would need
// and the unverified rows of strict scenarios; rowsOf are the rows by pair, as compareScenarios
// returned them.
func countVerdicts(rep *Report, rowsOf [][]Row, pairs []scenarioPair, cfg Config) {
	for i := range rep.Rows {
		r := &rep.Rows[i]
		switch r.Verdict {
		case Regression:
			rep.Regressions++
		case Unverified:
			rep.Unverified++
			if r.TooFew {
				rep.TooFew++
			}
		case Info:
			rep.Info++
		case Disagree:
			rep.Disagreements++
		case Improvement:
			rep.Improvements++
		case Unknown:
			switch {
			case r.Unresolved() && r.Improved():
				rep.UnknownImprovements++
			case r.Unresolved():
				rep.Unknown++
			}
		}
	}
	rep.Unresolved = unresolved(rep)
	if w := unresolvedBetter(rep); w != "" {
		rep.Warnings = append(rep.Warnings, w)
	}

	for i := range rep.Rows {
		if r := &rep.Rows[i]; r.Verdict != Unverified {
			r.TooFew = false // only an untested change is too few
		}
	}
	if rep.TooFew > 0 {
		rep.Need = NeedSamples(cfg.Alpha)
	}
	rep.Strict = cfg.Strict
	at := 0
	for i, rs := range rowsOf {
		for _, r := range rep.Rows[at : at+len(rs)] {
			if r.Verdict == Unverified && (cfg.Strict || pairs[i].n.Strict) {
				rep.StrictUnverified++
			}
		}
		at += len(rs)
	}
}

func ref(r *result.Run) RunRef {
	rr := RunRef{ID: r.ID, StartedAt: r.StartedAt}
	rr.Commit, _ = result.EnvValue(r.Environment, "git", "commit").(string)
	return rr
}
