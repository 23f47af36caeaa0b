package compare

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/inferbench/inferbench/result"
)

// This file holds instruction mode's rules (--measure instructions): counts are judged against a
// threshold of their own, and compared only between scenarios counted under the same identity
// (result.Scenario.Counted): another valgrind, CPU or interpreter changes the count of unchanged
// code, so a comparison across them is refused with what differs rather than called a
// regression.

// countThreshold is the default threshold of instruction counts, in percent. Unchanged code
// counted twice differs by far less (docs/measurements/verdicts.md, "Instruction mode"), and a 1% heavier
// function must fail.
const countThreshold = 0.5

// countTolerance is the change of a count's median, in percent, below which two counts are the
// same: unchanged code counted in two runs differed by at most 0.02% (the engine's
// stats.Summarize, whose calls allocate; 0 for SHA-256 in Go and a command, 0.0002% for a Python
// function; docs/measurements/verdicts.md).
const countTolerance = 0.1

// CountMethod is the Row.Method of a count: medians compared exactly, without a test.
//
// Note: a count row is not a Mann-Whitney test. The counts of one run's iterations are not
// samples of noise: they differ by what each call finds (the allocator's state, a collection),
// the same in every run (a Python function's six calls counted 13.17M to 13.78M instructions,
// and again to within 20 instructions in the next run). A test weighs the change of the median
// against that spread and misses a 1% heavier function; the spread between runs, the only noise
// of a count, is far below CountTolerance.
const CountMethod = "exact count"

// countRow compares the medians of two runs' counts.
func countRow(row Row, old, new []float64) Row {
	row.Old, row.New = quantile(old, 0.5), quantile(new, 0.5)
	row.OldN, row.NewN = len(old), len(new)
	row.Delta = delta(row.Old, row.New)
	row.Method = CountMethod
	row.Significant = math.Abs(row.Delta) > countTolerance
	return row
}

// countVerdict judges a count row: a change beyond CountTolerance is real.
func countVerdict(r *Row) string {
	if math.IsNaN(r.Delta) {
		return Unknown
	}
	return judged(r.Significant, worseBy(r), r.Threshold)
}

// isCount reports whether a metric row ("instructions", "est_cycles.p95") is a count of
// instruction mode.
func isCount(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	return base == result.InstructionsMetric || base == result.EstCyclesMetric
}

// incomparable returns why metric name of o and n cannot be compared: a count made under
// different identities. "" when it can.
func incomparable(o, n *result.Scenario, name string) string {
	if !isCount(name) {
		return ""
	}
	d := identityDiff(o.Counted, n.Counted)
	if d == "" {
		return ""
	}
	return "not compared: counted under a different identity (" + d + "); instruction counts change with valgrind's version, the CPU's features and the interpreter, not only with the code: compare runs counted on the same machine image"
}

// identityDiff lists what differs between two identities of instruction mode, "key old → new"
// joined by "; ", or "" when they are equal.
func identityDiff(old, new map[string]string) string {
	all := maps.Clone(old)
	if all == nil {
		all = map[string]string{}
	}
	maps.Copy(all, new)
	keys := slices.Sorted(maps.Keys(all))
	var diffs []string
	for _, k := range keys {
		o, n := old[k], new[k]
		if o == n {
			continue
		}
		if o == "" {
			o = "(none)"
		}
		if n == "" {
			n = "(none)"
		}
		diffs = append(diffs, fmt.Sprintf("%s %s → %s", k, o, n))
	}
	if old == nil && new != nil || old != nil && new == nil {
		if old == nil {
			return "the old run was timed, not counted"
		}
		return "the new run was timed, not counted"
	}
	return strings.Join(diffs, "; ")
}

// refused is the row of a count that is not compared: its values for the reader, no test and
// verdict Incomparable.
func refused(row Row, om, nm result.Metric, why string) Row {
	if v, ok := om.Center(); ok {
		row.Old = v
	}
	if v, ok := nm.Center(); ok {
		row.New = v
	}
	row.OldN, row.NewN = count(om), count(nm)
	row.Delta = delta(row.Old, row.New)
	row.P, row.Q = math.NaN(), math.NaN()
	row.Verdict = Incomparable
	row.Warnings = append(row.Warnings, why)
	return row
}
