package explain

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/inferbench/inferbench/result"
)

// Pair is a regressed scenario of a comparison: the scenario in each run and the metric that
// regressed, with its change in percent.
type Pair struct {
	Old, New *result.Scenario
	Metric   string
	DeltaPct float64
}

// Scenario is the explanation of one regressed scenario, or why there is none (Missing).
type Scenario struct {
	Benchmark   string       `json:"benchmark"`
	Scenario    string       `json:"scenario"`
	Metric      string       `json:"metric"`
	DeltaPct    float64      `json:"delta_pct"`
	Explanation *Explanation `json:"explanation,omitempty"`
	// Python explains the Python code between a torch model's operators, which the operator
	// counts (operators.json) do not see, from the bytecode counts both runs kept
	// (bytecode.json): set beside an operator explanation when it names a function. When the
	// operators name, add and remove nothing and it names a function, it is the Explanation
	// itself (see pythonBetween).
	Python *Explanation `json:"python,omitempty"`
	// Missing says why the scenario is not explained and how to get an explanation.
	Missing string `json:"missing,omitempty"`
	// Unreadable is set when a profile the runs list could not be read (missing, outside the
	// run folder, not a regular file, over its size limit, corrupt): Missing names the file and
	// what is wrong. explain then exits 1; compare keeps its verdict.
	Unreadable bool `json:"unreadable,omitempty"`
}

// HowTo is what a run needs to be explained.
const HowTo = "run both with --profile (inferbench run --profile; docs/explain.md)"

// Runs explains each pair from the profiles in the run folders oldDir and newDir ("" for a run
// that has no folder here, one read from the history store).
func Runs(oldDir, newDir string, pairs []Pair, o Options) []Scenario {
	out := make([]Scenario, 0, len(pairs))
	for _, p := range pairs {
		s := Scenario{Benchmark: p.New.Benchmark, Scenario: p.New.Scenario, Metric: p.Metric, DeltaPct: p.DeltaPct}
		old, errOld := load("old", oldDir, p.Old)
		nw, errNew := load("new", newDir, p.New)
		var unread *unreadable
		s.Unreadable = errors.As(errOld, &unread) || errors.As(errNew, &unread)
		switch {
		case errOld != nil || errNew != nil:
			var why []string
			for _, err := range []error{errOld, errNew} {
				if err != nil {
					why = append(why, err.Error())
				}
			}
			s.Missing = strings.Join(why, "; ")
		default:
			if old.Source != nw.Source {
				old, nw = common(oldDir, p.Old, old, newDir, p.New, nw)
			}
			x, err := Diff(old, nw, o)
			if err != nil {
				s.Missing = err.Error()
			}
			s.Explanation = x
			if err == nil && x.Source == SourceOperators {
				s.Explanation, s.Python = pythonBetween(oldDir, p.Old, newDir, p.New, x, o)
			}
		}
		out = append(out, s)
	}
	return out
}

// common returns profiles of one source when the two runs' preferred ones differ but both runs
// kept another: a counted worker's run made before bytecode.json (or operators.json) existed
// has only the callgrind file (or bytecode.json), which a newer run keeps too. Otherwise it
// returns the profiles as they are (Diff says why they do not compare).
func common(oldDir string, oldSc *result.Scenario, old *Profile, newDir string, newSc *result.Scenario, nw *Profile) (*Profile, *Profile) {
	if !slices.Contains([]string{SourceBytecode, SourceOperators}, old.Source) && !slices.Contains([]string{SourceBytecode, SourceOperators}, nw.Source) {
		return old, nw
	}
	for _, drop := range [][]string{{"operators.json"}, {"operators.json", "bytecode.json"}} {
		o, err1 := Load(oldDir, without(oldSc.Profiles, drop))
		n, err2 := Load(newDir, without(newSc.Profiles, drop))
		if err1 == nil && err2 == nil && o.Source == n.Source {
			return o, n
		}
	}
	return old, nw
}

// without returns files less those whose base name is in drop.
func without(files []string, drop []string) []string {
	var out []string
	for _, f := range files {
		if !slices.Contains(drop, filepath.Base(f)) {
			out = append(out, f)
		}
	}
	return out
}

// pythonBetween adds the Python code between a torch model's operators to their explanation x:
// a counted worker keeps bytecode.json beside operators.json, and a change in its Python
// functions (a preprocessing step, a loop around the model) moves their bytecode counts, not the
// operators'. When both runs kept it and it names a function, it returns x with the bytecode
// explanation beside it; or, when x names and lists nothing (no entry named, added or removed),
// the bytecode explanation in x's place, with a note that the operators held still. Otherwise x
// alone.
func pythonBetween(oldDir string, oldSc *result.Scenario, newDir string, newSc *result.Scenario, x *Explanation, o Options) (*Explanation, *Explanation) {
	// Without operators.json, Load reads the bytecode counts, the next source it prefers.
	old, err1 := Load(oldDir, without(oldSc.Profiles, []string{"operators.json"}))
	nw, err2 := Load(newDir, without(newSc.Profiles, []string{"operators.json"}))
	if err1 != nil || err2 != nil || old.Source != SourceBytecode || nw.Source != SourceBytecode {
		return x, nil
	}
	py, err := Diff(old, nw, o)
	if err != nil || len(py.Named) == 0 {
		return x, nil
	}
	if len(x.Named)+len(x.Added)+len(x.Removed) > 0 {
		return x, py
	}
	py.Warnings = append(py.Warnings, fmt.Sprintf("the torch operators' counts (operators.json, %d entries) changed by no more than their noise: the change is in the Python code between them, counted in bytecode instructions (bytecode.json)", x.Tested))
	return py, nil
}

func load(side, dir string, sc *result.Scenario) (*Profile, error) {
	if dir == "" {
		return nil, fmt.Errorf("the %s run has no folder here (read from the store), and its profiles are files of its folder: name the run folder", side)
	}
	p, err := Load(dir, sc.Profiles)
	if errors.Is(err, ErrNoProfile) && len(sc.Profiles) == 0 {
		return nil, fmt.Errorf("the %s run has no profile of %s: %s", side, sc.ID(), HowTo)
	}
	if errors.Is(err, ErrNoProfile) {
		return nil, fmt.Errorf("the %s run's profiles of %s (%s) are none explain reads: %s", side, sc.ID(), strings.Join(sc.Profiles, ", "), HowTo)
	}
	if err != nil {
		return nil, &unreadable{fmt.Errorf("the %s run's profile: %w", side, err)}
	}
	return p, nil
}

// unreadable is load's error for a profile that is there but could not be read.
type unreadable struct{ error }

func (u *unreadable) Unwrap() error { return u.error }

// Headline is the one line that says how much of the scenario's change the named entries
// explain: "latency_ms +12.1%; explained 87%: `aten::addmm` [8×64, 64×128] +0.41 ms per call
// (64%), `preprocess` +0.09 ms (21%)".
func (s *Scenario) Headline() string {
	head := fmt.Sprintf("%s %+.1f%%", s.Metric, s.DeltaPct)
	if s.Metric == "" {
		head = "profile"
	}
	x := s.Explanation
	if x == nil {
		return head + "; not explained: " + s.Missing
	}
	var b strings.Builder
	if len(x.Named) == 0 {
		fmt.Fprintf(&b, "%s; explained 0%%: no function's change is significant (%d tested; profiled %s → %s per call)", head, x.Tested, FormatCost(x.OldTotal, x.Unit), FormatCost(x.NewTotal, x.Unit))
	} else {
		fmt.Fprintf(&b, "%s; explained %.0f%%: ", head, 100*x.Explained)
		named(&b, x)
	}
	if s.Python != nil {
		b.WriteString("; the Python code between the operators: ")
		named(&b, s.Python)
	}
	return b.String()
}

// named writes x's first three named entries, each with its change and share.
func named(b *strings.Builder, x *Explanation) {
	for i, e := range x.Named {
		if i == 3 {
			fmt.Fprintf(b, ", %d more", len(x.Named)-3)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(QuoteName(e.Name))
		b.WriteString(" " + FormatDelta(e.Delta, x.Unit))
		if i == 0 {
			b.WriteString(" per call")
		}
		fmt.Fprintf(b, " (%.0f%%)", 100*e.Share)
	}
}

// QuoteName puts an entry's function or operator name in backticks, its shapes or place after:
// "`aten::addmm` [8×64, 64×128]", "`preprocess` (bench.py:12)".
func QuoteName(n string) string {
	for _, sep := range []string{" [", " ("} {
		if i := strings.Index(n, sep); i > 0 {
			return "`" + n[:i] + "`" + n[i:]
		}
	}
	return "`" + n + "`"
}

// FormatCost writes a cost per call in its unit: milliseconds below 0.1 as µs, instructions
// (Ir, and bytecode instructions, op) with k/M/G.
func FormatCost(v float64, unit string) string {
	a := math.Abs(v)
	switch unit {
	case "ms":
		switch {
		case a == 0:
			return "0 ms"
		case a < 0.1:
			return trim(fmt.Sprintf("%.3g", v*1000)) + " µs"
		default:
			return trim(fmt.Sprintf("%.3g", v)) + " ms"
		}
	case "Ir", "op":
		switch {
		case a >= 1e9:
			return trim(fmt.Sprintf("%.3g", v/1e9)) + "G " + unit
		case a >= 1e6:
			return trim(fmt.Sprintf("%.3g", v/1e6)) + "M " + unit
		case a >= 1e4:
			return trim(fmt.Sprintf("%.3g", v/1e3)) + "k " + unit
		default:
			return fmt.Sprintf("%.0f %s", v, unit)
		}
	}
	return trim(fmt.Sprintf("%.3g", v)) + " " + unit
}

// FormatDelta is FormatCost with a sign.
func FormatDelta(v float64, unit string) string {
	if v >= 0 {
		return "+" + FormatCost(v, unit)
	}
	return FormatCost(v, unit)
}

// trim turns %g's exponent form back into plain digits for the magnitudes FormatCost writes.
func trim(s string) string {
	if strings.ContainsAny(s, "e") {
		var f float64
		fmt.Sscan(s, &f)
		return fmt.Sprintf("%.0f", f)
	}
	return s
}
