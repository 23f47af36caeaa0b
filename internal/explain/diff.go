package explain

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	mstats "github.com/aclements/go-moremath/stats"

	"github.com/inferbench/inferbench/stats"
)

// Options are how Diff decides which entries to name. The zero value is the default.
type Options struct {
	// Alpha is the false discovery rate over the entries of one scenario (Benjamini-Hochberg;
	// default 0.01: with about twenty entries, an unchanged pair names none in 99% of pairs).
	Alpha float64
	// MinChange is the smallest change of an entry's share of the scenario's cost, relative to
	// the larger of its old and new share, that is named (default 0.03): a significant change
	// smaller than that is within the run-to-run shifts that chunks of one run cannot see (code
	// layout, frequency).
	MinChange float64
	// MinShare is the smallest change, relative to the scenario's old profiled cost per call, that
	// is named (default 0.001).
	MinShare float64
	// Max is how many entries are listed at most, named and added or removed each (default 10).
	Max int
}

func (o Options) norm() Options {
	if o.Alpha <= 0 {
		o.Alpha = 0.01
	}
	if o.MinChange <= 0 {
		o.MinChange = 0.03
	}
	if o.MinShare <= 0 {
		o.MinShare = 0.001
	}
	if o.Max <= 0 {
		o.Max = 10
	}
	return o
}

// Entry is one function's or operator's change between two profiles, per call of the subject.
type Entry struct {
	Name string `json:"name"`
	// Status is "changed", "added" (only in the new profile), "removed" (only in the old) or
	// "renamed": a function of the old profile only and one of the new only, in one file, whose
	// costs are within renameRatio of each other (pairNames); Was is then its old name, and the
	// entry compares the one's cost with the other's.
	Status string `json:"status"`
	Was    string `json:"was,omitempty"`
	// OldSelf and NewSelf are the entry's own cost per call in each profile, the Incl pair with
	// what it called, the Count pair its calls per call of the subject (0 when the profiler does
	// not count).
	OldSelf  float64 `json:"old_self"`
	NewSelf  float64 `json:"new_self"`
	OldIncl  float64 `json:"old_incl"`
	NewIncl  float64 `json:"new_incl"`
	OldCount float64 `json:"old_count,omitempty"`
	NewCount float64 `json:"new_count,omitempty"`
	// Delta is NewSelf - OldSelf; Share is Delta over the profile's total change per call.
	Delta float64 `json:"delta"`
	Share float64 `json:"share"`
	// P is the Welch t-test's p-value over the chunks, Q the Benjamini-Hochberg adjusted one
	// (both 0 for an exact profile's change).
	P float64 `json:"p"`
	Q float64 `json:"q"`
	// Varies is true for an entry of an exact profile whose count differed between the chunks
	// of one run (identical runs of the same code): its change is tested over the chunks, as a
	// timed entry's is, instead of taken as exact.
	Varies bool `json:"varies,omitempty"`
	// Named: significant (Q <= Alpha, or exact) and large enough (Options.MinChange, MinShare).
	Named bool `json:"named"`
}

// Explanation is the difference between two profiles of one scenario.
type Explanation struct {
	Source string `json:"source"`
	Unit   string `json:"unit"`
	Exact  bool   `json:"exact,omitempty"`
	// OldTotal and NewTotal are the profiled cost per call (the sum of every entry's own);
	// TotalP the Welch test of their change over the chunks.
	OldTotal  float64 `json:"old_total"`
	NewTotal  float64 `json:"new_total"`
	TotalP    float64 `json:"total_p"`
	OldChunks int     `json:"old_chunks"`
	NewChunks int     `json:"new_chunks"`
	Tested    int     `json:"tested"` // entries tested
	// Varied is how many entries of an exact profile varied between a run's chunks (Entry.Varies).
	Varied int     `json:"varied,omitempty"`
	Alpha  float64 `json:"alpha"`
	// Named are the entries whose change is named, the largest contribution to the change first.
	Named []Entry `json:"named"`
	// Added and Removed are the entries of one profile only that are not named, costliest first.
	Added   []Entry `json:"added,omitempty"`
	Removed []Entry `json:"removed,omitempty"`
	// Denominator is the change the shares are of, per call: the named entries' change, plus the
	// rest's when it is significant (RestP <= 0.05; else it is noise, counted as none). In an
	// exact profile the rest's steady counts add their change, and RestP is the test of the
	// entries that varied (Entry.Varies), whose change adds when RestP <= Alpha.
	Denominator float64 `json:"denominator"`
	RestP       float64 `json:"rest_p"`
	// Explained is the sum of the named entries' shares.
	Explained float64  `json:"explained"`
	Warnings  []string `json:"warnings,omitempty"`
	// Flame is the differential call tree of the two profiles (report.html draws it).
	Flame *Node `json:"flame,omitempty"`
}

// restAlpha is the level at which the change of the entries not named counts in the
// denominator of the shares.
const restAlpha = 0.05

// listShare is the smallest inclusive cost, relative to the profiled cost per call, of an entry
// of one run only that is listed as added or removed without being named: a sampling profiler
// catches a function of a few samples in one run and not the other.
const listShare = 0.01

// Diff compares two profiles of one scenario.
func Diff(old, nw *Profile, o Options) (*Explanation, error) {
	o = o.norm()
	if old.Source != nw.Source || old.Unit != nw.Unit {
		return nil, fmt.Errorf("the old profile is %s (%s), the new %s (%s): profiles of different profilers do not compare", old.Source, old.Unit, nw.Source, nw.Unit)
	}
	x := &Explanation{Source: nw.Source, Unit: nw.Unit, Exact: old.Exact && nw.Exact, OldChunks: len(old.Chunks), NewChunks: len(nw.Chunks), Alpha: o.Alpha}
	testable := x.Exact || (len(old.Chunks) >= 2 && len(nw.Chunks) >= 2)
	if !testable {
		x.Warnings = append(x.Warnings, fmt.Sprintf("%d and %d chunks: a change needs at least 2 chunks in each run to be tested; profile with this version's --profile", len(old.Chunks), len(nw.Chunks)))
	}
	oldTot, newTot := totals(old), totals(nw)
	x.OldTotal, x.NewTotal = mean(oldTot), mean(newTot)
	x.TotalP = welch(oldTot, newTot, x.Exact)
	all, ps, shareMove := compareEntries(x, old, nw, oldTot, newTot)
	x.Tested = len(all)
	if x.Exact && x.Varied > 0 && (x.OldChunks == 1) != (x.NewChunks == 1) {
		// A run of one chunk cannot show that a count varies, and the other run says counts do:
		// an entry whose count happened to hold still in the run of several chunks compares
		// exactly against the single one, and may be named for its noise.
		x.Warnings = append(x.Warnings, fmt.Sprintf("%d and %d chunks: %d entries varied between the chunks of one run, and the run of one chunk cannot show which of its counts vary; an entry named may be noise: count both runs with several chunks (this version keeps one a measured iteration)",
			x.OldChunks, x.NewChunks, x.Varied))
	}
	nameEntries(x, all, ps, shareMove, o, testable)
	addDenominator(x, old, nw, all, o, testable)
	for i := range all {
		if x.Denominator != 0 {
			all[i].Share = all[i].Delta / math.Abs(x.Denominator)
		}
	}
	listEntries(x, all, o)
	x.Flame = Flame(old.Stacks, nw.Stacks)
	return x, nil
}

// profileNames returns every function name of the two profiles' chunks, sorted.
func profileNames(old, nw *Profile) []string {
	names := map[string]bool{}
	for _, p := range []*Profile{old, nw} {
		for _, c := range p.Chunks {
			for n := range c.Self {
				names[n] = true
			}
			for n := range c.Incl {
				names[n] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(names))
}

// compareEntries compares each function of the two profiles (as pairNames pairs them), given
// the profiles' costs per call by chunk: an entry a function, with its costs, its status and
// its p-value, and for a sampled profile its share of the cost per call in each run
// (shareMove, [old, new]). It counts the entries whose counts varied into x.Varied.
func compareEntries(x *Explanation, old, nw *Profile, oldTot, newTot []float64) (all []Entry, ps []float64, shareMove [][2]float64) {
	for _, pn := range pairNames(old, nw, profileNames(old, nw), x.Exact) {
		on, nn := pn[0], pn[1]
		os, ns := perCall(old, on, selfOf), perCall(nw, nn, selfOf)
		e := Entry{
			Name:    nn,
			Status:  "changed",
			OldSelf: mean(os), NewSelf: mean(ns),
			OldIncl: mean(perCall(old, on, inclOf)), NewIncl: mean(perCall(nw, nn, inclOf)),
			OldCount: mean(perCall(old, on, countOf)), NewCount: mean(perCall(nw, nn, countOf)),
		}
		switch {
		case on != nn:
			e.Status, e.Name, e.Was = "renamed", nn+", was "+shortName(on), on
		case !has(old, on):
			e.Status = "added"
		case !has(nw, nn):
			e.Status = "removed"
		}
		e.Delta = e.NewSelf - e.OldSelf
		// The test is of the entry's share of each chunk's cost: a chunk that ran slower as a
		// whole (the machine busy, the clock lower) moves every entry's cost per call together,
		// not its share.
		if x.Exact {
			// Counts compare as counts. One that varied between the identical runs of one
			// profile is noise, to be tested as such.
			e.Varies = spread(os) > 0 || spread(ns) > 0
			e.P = welch(os, ns, true)
			if e.Varies {
				x.Varied++
			}
		} else {
			e.P = welch(shareOf(os, oldTot), shareOf(ns, newTot), false)
		}
		oshare, nshare := mean(shareOf(os, oldTot)), mean(shareOf(ns, newTot))
		shareMove = append(shareMove, [2]float64{oshare, nshare})
		ps = append(ps, e.P)
		all = append(all, e)
	}
	return all, ps, shareMove
}

// nameEntries names the entries whose change is large (MinShare of the old cost, and for a
// sampled profile a move of MinChange in its share, the same way) and surely not noise: an
// exact count that did not vary, or a q-value (Benjamini-Hochberg over ps) within Alpha.
func nameEntries(x *Explanation, all []Entry, ps []float64, shareMove [][2]float64, o Options, testable bool) {
	qs := stats.BenjaminiHochberg(ps)
	for i := range all {
		e := &all[i]
		e.Q = qs[i]
		d := math.Abs(e.Delta)
		big := d > 0 && d >= o.MinShare*x.OldTotal
		if !x.Exact {
			so, sn := shareMove[i][0], shareMove[i][1]
			big = big && math.Abs(sn-so) >= o.MinChange*max(so, sn) && (sn-so)*e.Delta > 0
		}
		e.Named = testable && big && ((x.Exact && !e.Varies) || e.Q <= o.Alpha)
	}
}

// addDenominator sums into x.Denominator the change the shares are of: the named entries', and
// the rest's where it is beyond its noise, with the rest's p-value in x.RestP.
func addDenominator(x *Explanation, old, nw *Profile, all []Entry, o Options, testable bool) {
	// Each entry's share is of the named entries' change plus the rest's when the rest's change
	// is beyond its noise (Welch over the chunks, p <= restAlpha): summed raw, twenty entries each
	// off by its noise would swamp a named entry's share of a small change.
	isNamed := map[string]bool{}
	for _, e := range all {
		if e.Named {
			x.Denominator += e.Delta
			isNamed[e.Name] = true
		}
	}
	switch {
	case testable && x.Exact:
		// The rest's steady counts changed by exactly what they changed. The varying ones'
		// change is noise unless it is significant at the level entries are named at.
		var varied []string
		for _, e := range all {
			switch {
			case e.Named:
			case e.Varies:
				varied = append(varied, e.Name)
			default:
				x.Denominator += e.Delta
			}
		}
		sum := func(p *Profile) []float64 {
			xs := make([]float64, len(p.Chunks))
			for i, c := range p.Chunks {
				for _, n := range varied {
					xs[i] += c.Self[n] / c.Calls
				}
			}
			return xs
		}
		vo, vn := sum(old), sum(nw)
		if x.RestP = welch(vo, vn, true); x.RestP <= o.Alpha {
			x.Denominator += mean(vn) - mean(vo)
		}
	case testable:
		rest := func(p *Profile) []float64 {
			xs := totals(p)
			for i, c := range p.Chunks {
				for n, v := range c.Self {
					if isNamed[n] {
						xs[i] -= v / c.Calls
					}
				}
			}
			return xs
		}
		ro, rn := rest(old), rest(nw)
		if x.RestP = welch(ro, rn, false); x.RestP <= restAlpha {
			x.Denominator += mean(rn) - mean(ro)
		}
	}
}

// listEntries puts the entries in order, the largest contribution in the direction of the
// change first, and lists up to Max of them as named, added (costliest first) or removed.
func listEntries(x *Explanation, all []Entry, o Options) {
	dir := 1.0
	if x.Denominator < 0 {
		dir = -1
	}
	slices.SortStableFunc(all, func(a, b Entry) int { return cmp.Compare(b.Delta*dir, a.Delta*dir) })
	for _, e := range all {
		switch {
		case e.Named:
			if len(x.Named) < o.Max {
				x.Named = append(x.Named, e)
			}
			x.Explained += e.Share
		case e.Status == "added" && len(x.Added) < o.Max && e.NewIncl >= listShare*x.OldTotal:
			x.Added = append(x.Added, e)
		case e.Status == "removed" && len(x.Removed) < o.Max && e.OldIncl >= listShare*x.OldTotal:
			x.Removed = append(x.Removed, e)
		}
	}
	slices.SortStableFunc(x.Added, func(a, b Entry) int { return cmp.Compare(b.NewIncl, a.NewIncl) })
	slices.SortStableFunc(x.Removed, func(a, b Entry) int { return cmp.Compare(b.OldIncl, a.OldIncl) })
}

// renameRatio is how far apart, as a ratio, the costs per call of a function only in the old
// profile and one only in the new may be for pairNames to take them for one function renamed.
const renameRatio = 1.25

// pairNames returns the names to compare, each as [old name, new name]: a name of both
// profiles as itself, and a function of one profile only paired with one of the other only as a
// rename where both are in one scope (a Python function's file, a Go function's package) and
// their own costs per call are within renameRatio, the closest pair first. A rename changes no
// cost, and compared as a removed and an added function it would be named as the change (each by
// its whole cost) above the function that did change. The rest stay as themselves.
func pairNames(old, nw *Profile, names []string, exact bool) [][2]string {
	var out [][2]string
	var removed, added []string
	for _, n := range names {
		switch inOld, inNew := has(old, n), has(nw, n); {
		case inOld && !inNew:
			removed = append(removed, n)
		case inNew && !inOld:
			added = append(added, n)
		default:
			out = append(out, [2]string{n, n})
		}
	}
	type cand struct {
		r, a string
		d    float64
	}
	var cs []cand
	for _, r := range removed {
		for _, a := range added {
			ro, an := mean(perCall(old, r, selfOf)), mean(perCall(nw, a, selfOf))
			if scope(r, exact) == "" || scope(r, exact) != scope(a, exact) || !(ro > 0 && an > 0) {
				continue
			}
			if d := math.Abs(math.Log(an / ro)); d <= math.Log(renameRatio) {
				cs = append(cs, cand{r, a, d})
			}
		}
	}
	slices.SortStableFunc(cs, func(x, y cand) int { return cmp.Compare(x.d, y.d) })
	used := map[string]bool{}
	for _, c := range cs {
		if !used[c.r] && !used[c.a] {
			used[c.r], used[c.a] = true, true
			out = append(out, [2]string{c.r, c.a})
		}
	}
	for _, n := range append(removed, added...) {
		if !used[n] {
			out = append(out, [2]string{n, n})
		}
	}
	return out
}

// scope is where a function's name says it lives: a Python identity's file ("f (a.py)" is in
// " (a.py)"), in an exact profile a Go function's package ("main.f" in "main"); "" for names that
// are no function's (an operator, "aten::mm [...]"), which are never paired as renames, and for
// a sampled Go profile's, whose functions of a few samples come and go between runs.
func scope(n string, exact bool) string {
	if strings.Contains(n, "::") || strings.Contains(n, "[") {
		return ""
	}
	if i := strings.LastIndex(n, " ("); i > 0 && strings.HasSuffix(n, ")") {
		return n[i:]
	}
	if i := strings.LastIndex(n, "."); i > 0 && exact {
		return n[:i]
	}
	return ""
}

// shortName is a name without its scope's file: "f08 (a.py)" is "f08".
func shortName(n string) string {
	if i := strings.LastIndex(n, " ("); i > 0 && strings.HasSuffix(n, ")") {
		return n[:i]
	}
	return n
}

func selfOf(c *Chunk, n string) float64  { return c.Self[n] }
func inclOf(c *Chunk, n string) float64  { return c.Incl[n] }
func countOf(c *Chunk, n string) float64 { return c.Count[n] }

// perCall returns an entry's cost per call of the subject in each chunk (0 where it is absent).
func perCall(p *Profile, n string, of func(*Chunk, string) float64) []float64 {
	xs := make([]float64, len(p.Chunks))
	for i := range p.Chunks {
		xs[i] = of(&p.Chunks[i], n) / p.Chunks[i].Calls
	}
	return xs
}

// totals returns each chunk's profiled cost per call: the sum of the entries' own costs.
func totals(p *Profile) []float64 {
	xs := make([]float64, len(p.Chunks))
	for i, c := range p.Chunks {
		for _, v := range c.Self {
			xs[i] += v
		}
		xs[i] /= c.Calls
	}
	return xs
}

func has(p *Profile, n string) bool {
	for _, c := range p.Chunks {
		if _, ok := c.Self[n]; ok {
			return true
		}
		if _, ok := c.Incl[n]; ok {
			return true
		}
	}
	return false
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// welch returns the two-sided p-value of Welch's t-test of the chunks' means. Exact profiles
// need no test where their counts are steady: 0 when the means differ, 1 when not. Chunks without
// spread on both sides compare as exact; fewer than two chunks on a side give NaN (no test), as
// does a count that varies on one side and has a single chunk on the other.
func welch(a, b []float64, exact bool) float64 {
	if spread(a) == 0 && spread(b) == 0 && (exact || (len(a) >= 2 && len(b) >= 2)) {
		if mean(a) == mean(b) {
			return 1
		}
		return 0
	}
	if len(a) < 2 || len(b) < 2 {
		return math.NaN()
	}
	r, err := mstats.TwoSampleWelchTTest(mstats.Sample{Xs: a}, mstats.Sample{Xs: b}, mstats.LocationDiffers)
	if err != nil {
		return math.NaN()
	}
	return r.P
}

// shareOf divides each chunk's cost by the chunk's total.
func shareOf(xs, totals []float64) []float64 {
	out := make([]float64, len(xs))
	for i := range xs {
		if totals[i] != 0 {
			out[i] = xs[i] / totals[i]
		}
	}
	return out
}

func spread(xs []float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return hi - lo
}
