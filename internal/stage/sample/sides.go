package sample

import (
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/inferbench/inferbench/internal/monitor"
	"github.com/inferbench/inferbench/result"
)

// The resources of a paired run (run.Paired: `run --baseline-ref REF`), whose calls alternate
// between two sides in blocks. Each side is sampled during its own measured blocks only, so
// that the other side's calls never fall in its windows, and its blocks' windows are joined into
// one report a side: totals summed over the blocks (the largest for a peak), gauges over every
// sample of every block, timelines on the side's own time (the blocks end to end).

// By says whose processes a side's windows sampled, and so which figures are the side's own.
type By int

const (
	// ByOwnProcess: each block ran in a process of its own, which sampled itself (a Go
	// function's block is a run of that side's binary): every figure is the side's.
	ByOwnProcess By = iota
	// BySubject: the side's subject processes (a worker's, subject.Processes) and their
	// children. The other side's processes stay alive beside them, so the GPUs' memory in use,
	// device-wide, is not the side's: it is left out.
	BySubject
	// ByHarness: inferbench and its children, for subjects that run in inferbench or start a
	// process per call (commands, clients of a server). During a side's block only that side
	// calls, so CPU time, I/O and energy are its calls'; inferbench's memory holds both sides,
	// so the tree's memory is not the side's and is left out (a command reports its own peak,
	// peak_rss_mb), as is the GPUs' memory in use (device-wide).
	ByHarness
)

// Sides samples the two sides of one paired scenario. A nil *Sides samples nothing.
type Sides struct {
	m    *Monitors
	mu   sync.Mutex
	wins [2][]*result.Resources
}

// Sides returns the sampling of one paired scenario with the run's monitors; nil when m is nil.
func (m *Monitors) Sides() *Sides {
	if m == nil {
		return nil
	}
	return &Sides{m: m}
}

// Interval is the monitors' sampling period, for a side whose processes sample themselves.
func (s *Sides) Interval() time.Duration {
	if s == nil {
		return 0
	}
	return s.m.cfg.Interval
}

// Window opens a window over the tree rooted at pids (nil: inferbench itself) for a measured
// block of side v; the function it returns closes the window and adds it to the side.
func (s *Sides) Window(v int, pids func() []int) (stop func()) {
	if s == nil {
		return func() {}
	}
	mon := s.m.src.Monitor(pids)
	mon.Start()
	return func() { s.Add(v, mon.Stop()) }
}

// Add adds the window of a measured block of side v, sampled where it ran (ByOwnProcess).
func (s *Sides) Add(v int, rep *result.Resources) {
	if s == nil || rep == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wins[v] = append(s.wins[v], rep)
}

// Attach attaches side v's blocks, joined, to r as Attach attaches a scenario's window, leaving
// out what by says is not the side's (extra.resources.warnings says so). Nothing
// is attached when the side had no measured block.
func (s *Sides) Attach(v int, r *result.Scenario, by By) {
	if s == nil {
		return
	}
	s.mu.Lock()
	rep := join(s.wins[v])
	s.mu.Unlock()
	if rep == nil {
		return
	}
	var left []string
	if by != ByOwnProcess && drop(rep, "gpu_mem_used_mb") {
		left = append(left, "gpu_mem_used_mb (device-wide: the other side's processes hold theirs)")
	}
	if by == ByHarness && drop(rep, "rss_mb", "peak_rss_mb") {
		left = append(left, "the tree's rss_mb and peak_rss_mb (inferbench's memory holds both sides)")
	}
	// Memory growth is not judged across a side's blocks: they are not one window of one
	// process (a worker is relaunched every few pairs, a Go function's blocks are processes of
	// their own), so the RSS timeline is kept out of Attach's fit and put back after it.
	all := rep.Timelines
	rep.Timelines = slices.DeleteFunc(slices.Clone(all), func(tl result.Timeline) bool { return tl.Name == "rss_mb" })
	Attach(r, rep, by == BySubject, s.m.cfg.Grid, monitor.DefaultGrowthThreshold)
	rep.Timelines = all
	if len(left) > 0 { // said under extra.resources, not as the scenario's warning: nothing is wrong
		rep.Warnings = append(rep.Warnings, "a side of a paired run, sampled during its own blocks; left out as not the side's own: "+strings.Join(left, ", "))
	}
}

// drop removes the aggregates and timelines named names from rep; it reports whether one was there.
func drop(rep *result.Resources, names ...string) bool {
	in := func(n string) bool { return slices.Contains(names, n) }
	found := false
	ms := rep.Metrics[:0]
	for _, a := range rep.Metrics {
		if in(a.Name) {
			found = true
			continue
		}
		ms = append(ms, a)
	}
	rep.Metrics = ms
	tls := rep.Timelines[:0]
	for _, tl := range rep.Timelines {
		if !in(tl.Name) {
			tls = append(tls, tl)
		}
	}
	rep.Timelines = tls
	return found
}

// join joins the windows of one side's blocks, in the order measured, into one report whose
// window is the blocks end to end: its duration their sum, its timelines on that time. A total
// is the sum of the blocks' (the largest for a peak), a gauge's aggregate is over every sample.
// What only describes a window (memory growth, GPU noise, the tree) is left for Attach to derive.
func join(ws []*result.Resources) *result.Resources {
	if len(ws) == 0 {
		return nil
	}
	out := &result.Resources{IntervalMS: ws[0].IntervalMS, Start: ws[0].Start, CostClock: ws[0].CostClock}
	aggs := map[string]int{} // index in out.Metrics
	tls := map[string]*joined{}
	var order []string
	var dur time.Duration
	seen := map[string]bool{}
	for _, w := range ws {
		for _, a := range w.Metrics {
			if i, ok := aggs[a.Name]; ok {
				out.Metrics[i] = joinAggregate(out.Metrics[i], a)
				continue
			}
			aggs[a.Name] = len(out.Metrics)
			out.Metrics = append(out.Metrics, a)
		}
		for _, tl := range w.Timelines {
			if tls[tl.Name] == nil {
				tls[tl.Name] = &joined{name: tl.Name, unit: tl.Unit}
				order = append(order, tl.Name)
			}
			tls[tl.Name].add(tl, dur.Seconds())
		}
		dur += w.Duration()
		out.Samples += w.Samples
		out.CostS += w.CostS
		out.Warnings = union(out.Warnings, w.Warnings, seen)
		out.Unavailable = union(out.Unavailable, w.Unavailable, seen)
	}
	slices.SortFunc(out.Metrics, func(a, b result.Aggregate) int { return strings.Compare(a.Name, b.Name) })
	slices.Sort(order)
	for _, n := range order {
		out.Timelines = append(out.Timelines, tls[n].timeline(monitor.DefaultMaxPoints))
	}
	out.End = out.Start.Add(dur)
	out.DurationS = dur.Seconds()
	if dur > 0 {
		out.CostPct = 100 * out.CostS / dur.Seconds()
	}
	return out
}

// union appends to dst the lines of src not seen yet.
func union(dst, src []string, seen map[string]bool) []string {
	for _, x := range src {
		if !seen[x] {
			seen[x] = true
			dst = append(dst, x)
		}
	}
	return dst
}

// joinAggregate is the aggregate of two blocks' windows, a then b: a gauge over the samples of
// both, a total summed (the larger for a peak, peak_*).
func joinAggregate(a, b result.Aggregate) result.Aggregate {
	if a.Kind == "total" {
		if strings.HasPrefix(a.Name, "peak_") {
			a.Value = math.Max(a.Value, b.Value)
		} else {
			a.Value += b.Value
		}
		return a
	}
	if b.N == 0 {
		return a
	}
	if a.N == 0 {
		return b
	}
	n := a.N + b.N
	a.Mean = (a.Mean*float64(a.N) + b.Mean*float64(b.N)) / float64(n)
	a.Min, a.Max, a.Last, a.N = math.Min(a.Min, b.Min), math.Max(a.Max, b.Max), b.Last, n
	return a
}

// joined is a gauge's timeline over a side's blocks: each block's points, their offsets moved by
// the blocks before it, each point weighed by its samples.
type joined struct {
	name, unit string
	t, v, max  []float64
	n          []int
}

func (j *joined) add(tl result.Timeline, off float64) {
	for i := range tl.T {
		j.t, j.v, j.max = append(j.t, off+tl.T[i]), append(j.v, tl.V[i]), append(j.max, tl.Max[i])
		j.n = append(j.n, max(1, tl.Every))
	}
}

// timeline returns the joined points, neighbours merged pairwise until at most maxPoints remain
// (as the monitor bounds a window's); Every is the mean samples a point.
func (j *joined) timeline(maxPoints int) result.Timeline {
	for len(j.t) > maxPoints {
		k := 0
		for i := 0; i < len(j.t); i += 2 {
			if i+1 == len(j.t) {
				j.t[k], j.v[k], j.max[k], j.n[k] = j.t[i], j.v[i], j.max[i], j.n[i]
				k++
				break
			}
			a, b := float64(j.n[i]), float64(j.n[i+1])
			j.t[k] = (j.t[i]*a + j.t[i+1]*b) / (a + b)
			j.v[k] = (j.v[i]*a + j.v[i+1]*b) / (a + b)
			j.max[k], j.n[k] = math.Max(j.max[i], j.max[i+1]), j.n[i]+j.n[i+1]
			k++
		}
		j.t, j.v, j.max, j.n = j.t[:k], j.v[:k], j.max[:k], j.n[:k]
	}
	total := 0
	for _, n := range j.n {
		total += n
	}
	return result.Timeline{Name: j.name, Unit: j.unit, Every: max(1, total/max(1, len(j.n))), T: j.t, V: j.v, Max: j.max}
}
