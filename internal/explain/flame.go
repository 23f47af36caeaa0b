package explain

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// Node is a frame of the differential flame graph: the cost per call of the subject spent in it
// (and below) along its path, in the old and the new profile. Children are sorted by name, so the
// same function is in the same place for both profiles.
type Node struct {
	Name     string  `json:"name"`
	Old      float64 `json:"old"`
	New      float64 `json:"new"`
	Children []*Node `json:"children,omitempty"`
}

// flameMin is the smallest frame kept, relative to the root's larger cost: smaller frames would be
// narrower than a pixel in a page-wide graph.
const flameMin = 0.002

// Flame builds the differential call tree of two sets of folded stacks (Profile.Stacks).
func Flame(old, nw map[string]float64) *Node {
	root := &Node{Name: "all"}
	index := map[*Node]map[string]*Node{}
	add := func(stacks map[string]float64, isNew bool) {
		for _, k := range slices.Sorted(maps.Keys(stacks)) {
			v := stacks[k]
			n := root
			bump := func(n *Node) {
				if isNew {
					n.New += v
				} else {
					n.Old += v
				}
			}
			bump(n)
			for _, f := range strings.Split(k, ";") {
				m := index[n]
				if m == nil {
					m = map[string]*Node{}
					index[n] = m
				}
				c := m[f]
				if c == nil {
					c = &Node{Name: f}
					m[f] = c
					n.Children = append(n.Children, c)
				}
				n = c
				bump(n)
			}
		}
	}
	add(old, false)
	add(nw, true)
	limit := flameMin * max(root.Old, root.New)
	var prune func(n *Node)
	prune = func(n *Node) {
		n.Children = slices.DeleteFunc(n.Children, func(c *Node) bool { return max(c.Old, c.New) < limit })
		slices.SortFunc(n.Children, func(a, b *Node) int { return cmp.Compare(a.Name, b.Name) })
		for _, c := range n.Children {
			prune(c)
		}
	}
	prune(root)
	return root
}
