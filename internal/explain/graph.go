package explain

import (
	"maps"
	"slices"
)

// graph is a call graph with costs: each node's self and inclusive cost, each edge's inclusive
// cost of the callee when called from the caller. cProfile and callgrind give this, not stacks.
type graph struct {
	self, incl map[string]float64
	out        map[string]map[string]float64
	in         map[string]float64 // the cost of the edges into a node
}

func newGraph() *graph {
	return &graph{self: map[string]float64{}, incl: map[string]float64{}, out: map[string]map[string]float64{}, in: map[string]float64{}}
}

func (g *graph) edge(caller, callee string, incl float64) {
	if caller == callee || incl <= 0 {
		return
	}
	if g.out[caller] == nil {
		g.out[caller] = map[string]float64{}
	}
	g.out[caller][callee] += incl
	g.in[callee] += incl
}

// Folding a graph into stacks is gprof's approximation: a node reached along a path gets the
// share of its cost that the path's edge carries of all its callers' edges. Expansions carrying less than
// foldMin of the total, deeper than foldDepth or into a frame already on the path (recursion) stop;
// their cost stays with the frame above, so the stacks still add up to the total. After
// foldStacks stacks nothing more is expanded: an interpreter's call graph (CPython's, hundreds
// of C functions calling each other in cycles) has more paths above foldMin than a picture can
// show or memory hold.
const (
	foldMin    = 1e-4
	foldDepth  = 64
	foldStacks = 20000
)

// fold adds the graph's stacks to stacks: every root (a node nothing calls) expanded.
func (g *graph) fold(stacks map[string]float64) {
	var total float64
	for _, v := range g.self {
		total += v
	}
	if total <= 0 {
		return
	}
	roots := []string{}
	for n := range g.incl {
		if g.in[n] == 0 {
			roots = append(roots, n)
		}
	}
	slices.Sort(roots)
	entry, comp := g.entries()
	var path []string
	expanded := 0
	var expand func(n string, v float64)
	expand = func(n string, v float64) {
		path = append(path, n)
		defer func() { path = path[:len(path)-1] }()
		// The node's cost along this path is the path's share of the edges into it from outside
		// its cycle (all of it for a root): every function's frames add up to its inclusive cost, even where a
		// profiler's edges do not add up to it (callgrind's "(below main)"). A path that reached
		// it from within its cycle carries a share of all the edges into it: of the few from
		// outside, the share would exceed the whole, and grow along each turn of the cycle.
		in := entry[n]
		if len(path) > 1 && comp[path[len(path)-2]] == comp[n] {
			in = 0
		}
		if in <= 0 {
			in = g.in[n]
		}
		if in <= 0 {
			in = g.incl[n]
		}
		if in <= 0 {
			return
		}
		f := v / in
		self := g.self[n] * f
		for _, c := range slices.Sorted(maps.Keys(g.out[n])) {
			cv := g.out[n][c] * f
			if cv < foldMin*total || len(path) >= foldDepth || expanded >= foldStacks || slices.Contains(path, c) {
				self += cv
				continue
			}
			expanded++
			expand(c, cv)
		}
		if self > 0 {
			stacks[stackKey(path)] += self
		}
	}
	for _, r := range roots {
		expand(r, g.incl[r])
	}
}

// entries returns, for each node, the cost of the edges into it from outside its strongly
// connected component (a cycle's edges back into a node, callgrind's two "(below main)", one
// calling libc that calls the other, would otherwise count its cost twice), and each node's
// component.
func (g *graph) entries() (map[string]float64, map[string]int) {
	comp := map[string]int{}
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	next, ncomp := 0, 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range slices.Sorted(maps.Keys(g.out[v])) {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = ncomp
				if w == v {
					break
				}
			}
			ncomp++
		}
	}
	nodes := map[string]bool{}
	for n := range g.incl {
		nodes[n] = true
	}
	for a, m := range g.out {
		nodes[a] = true
		for b := range m {
			nodes[b] = true
		}
	}
	for _, n := range slices.Sorted(maps.Keys(nodes)) {
		if _, seen := index[n]; !seen {
			visit(n)
		}
	}
	in := map[string]float64{}
	for a, m := range g.out {
		for b, v := range m {
			if comp[a] != comp[b] {
				in[b] += v
			}
		}
	}
	return in, comp
}
