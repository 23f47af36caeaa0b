// This file holds the report of a paired run (against a ref, or of two variants): the
// comparison rows of the scenarios' A/Bs and compare's rules for CPU-bound scenarios.

package ab

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/gitref"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// refReport is the comparison of the run with the ref (pairedReport of the scenarios'
// "baseline_ref" sections): the ref's side is the old one, the working tree the new.
func refReport(r *result.Run, wt *gitref.Worktree, o RefOptions) *compare.Report {
	nw := compare.RunRef{ID: r.ID, Label: "working tree", StartedAt: r.StartedAt, Commit: wt.Head}
	if wt.Dirty {
		nw.Label = "working tree, with uncommitted changes"
	}
	return pairedReport(r, SectionBaselineRef, compare.RunRef{ID: wt.Ref, Commit: wt.Commit}, nw, o.Alpha, o.Run.Compare)
}

// pairedReport is the comparison of a paired run's two sides, old and nw, from the A/Bs in its
// scenarios' sections named key (a RefSection each): a row per scenario and metric compared
// (latency_ms, and cpu_ms where the subject reports it), then compare's rules under cfg: a row
// gates where cfg.Gated says (latency_ms for the iteration subjects), cpu_ms where the scenario
// is CPU-bound (compare.CPUBound), and a latency regression that the CPU time does not confirm
// is the machine's (compare.Disagree) unless the user named latency_ms.
func pairedReport(r *result.Run, key string, old, nw compare.RunRef, alpha float64, cfg compare.Config) *compare.Report {
	if alpha <= 0 || alpha >= 1 {
		alpha = 0.01
	}
	rep := &compare.Report{Old: old, New: nw, Alpha: alpha}
	type scenarioRows struct {
		sc       *result.Scenario
		lat, cpu int // indices in rep.Rows; -1 when absent
	}
	var groups []scenarioRows
	var answers []string // each row's answer in words
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		raw, ok := sc.Extra.Other[key]
		if !ok {
			continue
		}
		var sec RefSection
		if json.Unmarshal(raw, &sec) != nil || sec.Result == nil || sec.Result.Verdict == "" {
			continue
		}
		g := scenarioRows{sc: sc, lat: len(rep.Rows), cpu: -1}
		rep.Rows = append(rep.Rows, refRow(sc, sec.Result, cfg.Gated(sc, sec.Result.Metric)))
		answers = append(answers, sec.Result.answerLine())
		if sec.CPU != nil && sec.CPU.Verdict != "" {
			g.cpu = len(rep.Rows)
			rep.Rows = append(rep.Rows, refRow(sc, sec.CPU, cfg.Gated(sc, cpuMetric)))
			answers = append(answers, sec.CPU.answerLine())
			if rep.Rows[g.lat].Gated && !rep.Rows[g.cpu].Gated && cpuBound(sec, sc) {
				rep.Rows[g.cpu].Gated = true
			}
		}
		groups = append(groups, g)
	}
	// Each row's verdict is its A/B's answer, whose level was adjusted across the scenarios
	// before they ran (alpha over their number: Bonferroni), and across its looks.
	for i := range rep.Rows {
		row := &rep.Rows[i]
		row.Q = row.P
		if !row.Gated && row.Verdict == compare.Regression {
			row.Verdict = compare.Info
		}
		if row.Gated {
			row.Warnings = append(row.Warnings, answers[i])
		}
	}
	for _, g := range groups {
		if g.cpu >= 0 && rep.Rows[g.cpu].Gated {
			wallAgainstCPU(&rep.Rows[g.lat], &rep.Rows[g.cpu], asked(cfg, g.sc))
		}
	}
	strict := map[string]bool{} // scenarios whose definition says strict: true
	for _, g := range groups {
		strict[g.sc.ID()] = g.sc.Strict
	}
	rep.Strict = cfg.Strict
	var undecided []string
	for i, row := range rep.Rows {
		switch {
		case row.Failed():
			rep.Regressions++
		case row.Verdict == compare.Improvement:
			rep.Improvements++
		case row.Verdict == compare.Info:
			rep.Info++
		case row.Verdict == compare.Unknown && row.Gated:
			// The pairs' budget was spent with the interval straddling the threshold: unknown,
			// which compare.Report.Failed fails with --strict (a definition's strict: true too).
			rep.Unknown++
			if strict[row.ID()] {
				rep.StrictUnverified++
			}
			undecided = append(undecided, fmt.Sprintf("%s %s: %s", row.ID(), row.Metric, answers[i]))
		}
	}
	if len(undecided) > 0 {
		rep.Unresolved = fmt.Sprintf("not known: %d gated change(s) this job's pairs could not tell from the threshold: %s; more pairs (--max-time) or instruction counts (--measure instructions) can tell; --strict fails on it",
			len(undecided), strings.Join(undecided, "; "))
	}
	rep.Budgets, rep.BudgetsExceeded = compare.CheckRunBudgets(r, cfg.Budgets)
	for _, sc := range r.Scenarios {
		if sc.Status == result.StatusFailed {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s not compared: %s", sc.ID(), sc.Error))
		}
	}
	if len(rep.Rows) == 0 && len(r.Scenarios) > 0 && r.Summary.Skipped < len(r.Scenarios) {
		rep.NoEvidence = "no scenario was measured on both sides"
	}
	return rep
}

// cpuBound is compare's test of a CPU-bound scenario on the two sides' calls: the median CPU
// time over the fastest wall time (the call that waited least for a core) reaches
// compare.CPUBoundRatio on either side.
func cpuBound(sec RefSection, sc *result.Scenario) bool {
	share := func(lat, cpu []float64) float64 {
		if len(lat) < 2 || len(cpu) < 2 || !(slices.Min(lat) > 0) {
			return 0
		}
		return median(cpu) / slices.Min(lat)
	}
	var baseCPU []float64
	if sec.BaselineCPU != nil {
		baseCPU = sec.BaselineCPU.Samples
	}
	return share(sec.Baseline.Samples, baseCPU) >= compare.CPUBoundRatio ||
		share(sc.Metrics["latency_ms"].Samples, sc.Metrics[cpuMetric].Samples) >= compare.CPUBoundRatio
}

// refRow is the comparison row of one A/B (the verdict is set once the p-values are adjusted).
func refRow(sc *result.Scenario, res *Result, gated bool) compare.Row {
	row := compare.Row{
		Benchmark: sc.Benchmark, Scenario: sc.Scenario, Metric: res.Metric, Unit: res.Unit, Better: res.Better,
		Kind: compare.KindOf(res.Metric), Primary: true, Gated: gated,
		Old: res.MedianA, New: res.MedianB, Delta: 100 * (res.Ratio - 1),
		DeltaCI: &stats.Interval{Lo: 100 * (res.CI.Lo - 1), Hi: 100 * (res.CI.Hi - 1), Confidence: res.CI.Confidence},
		P:       res.P, Method: res.Method, Threshold: res.Threshold, Warnings: slices.Clone(res.Warnings),
		Verdict: res.Verdict, Significant: res.CI.Lo > 1 || res.CI.Hi < 1,
	}
	for _, bl := range res.Blocks {
		if bl.Variant == "A" {
			row.OldN += bl.N
		} else {
			row.NewN += bl.N
		}
	}
	return row
}

// asked reports whether the user named a metric to gate for sc: the definition's gate: or
// --gate.
func asked(cfg compare.Config, sc *result.Scenario) func(string) bool {
	return func(m string) bool {
		entries := append(append([]string(nil), sc.Gate...), cfg.Gate...)
		if len(entries) == 0 {
			return false
		}
		s := *sc
		s.Gate = entries
		return compare.Config{}.Gated(&s, m)
	}
}

// wallAgainstCPU is compare's rule for a CPU-bound scenario whose wall time and CPU time point
// opposite ways: a latency regression that the CPU time does not confirm is the machine's (the
// wait for a core grew), and more CPU time with less wall time is work moved to other threads;
// either is Disagree, unless the user named the metric.
func wallAgainstCPU(lat, cpu *compare.Row, asked func(string) bool) {
	change := func(r *compare.Row) string {
		if !r.Significant {
			return fmt.Sprintf("%s ~ (%+.1f%%, not significant)", r.Metric, r.Delta)
		}
		return fmt.Sprintf("%s %+.1f%%", r.Metric, r.Delta)
	}
	switch {
	case lat.Verdict == compare.Regression && cpu.Verdict != compare.Regression && !asked(lat.Metric):
		lat.Verdict = compare.Disagree
		lat.Warnings = append(lat.Warnings, fmt.Sprintf("%s: wall time and CPU time disagree (%s, %s): the machine moved, not the code; a wait the code added (sleep, I/O, a lock) reads the same: `--gate latency_ms` fails on wall time alone", lat.ID(), change(lat), change(cpu)))
	case cpu.Verdict == compare.Regression && (lat.Verdict == compare.Better || lat.Verdict == compare.Improvement) && !asked(cpu.Metric):
		cpu.Verdict = compare.Disagree
		cpu.Warnings = append(cpu.Warnings, fmt.Sprintf("%s: wall time and CPU time disagree (%s, %s): more CPU time, less wall time (work moved to other threads, or the machine got faster); `--gate cpu_ms` fails on CPU time alone", cpu.ID(), change(lat), change(cpu)))
	}
}
