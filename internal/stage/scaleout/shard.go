// Sharding splits a suite's scenarios across machines. Each machine of a Kubernetes Indexed
// Job, a Slurm job array or a CI matrix runs `inferbench run --shard i/n` and gets a
// deterministic part of the selected scenarios; together the parts hold every scenario exactly
// once. The assignment depends only on the set of scenario IDs, the shard count and the costs
// given (never on input order, map order, host or time), so every process of the group computes
// the same plan, and a Plan digest lets the merge check that they did.
//
// Balance: with costs (the duration of each scenario in an earlier run) the scenarios are
// placed longest first on the least loaded shard (LPT, within 4/3 of the best makespan);
// without, they are dealt round-robin in the order of a hash of their IDs, so shard sizes differ
// by at most one.
//
// Note: costs must be the same in every shard of a group. They are read from a fixed reference
// (a run file, a run ID or a baseline), never from "the latest run", which changes as the first
// shards finish: two shards planning with different costs would drop or repeat scenarios. The
// Plan digest covers the costs, so `inferbench merge` reports such a group as inconsistent.

package scaleout

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Spec is one shard of a group: Index in [0, Count). Indices are 0-based, as Kubernetes
// (JOB_COMPLETION_INDEX) and GitHub Actions (strategy.job-index) number them.
type Spec struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// String returns "i/n".
func (s Spec) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// MaxCount bounds the shard count.
const MaxCount = 100000

// Validate reports an index outside [0, Count).
func (s Spec) Validate() error {
	if s.Count < 1 || s.Count > MaxCount {
		return fmt.Errorf("shard count %d: want 1 to %d", s.Count, MaxCount)
	}
	if s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard index %d of %d: want 0 to %d (indices are 0-based)", s.Index, s.Count, s.Count-1)
	}
	return nil
}

// Environment variables read by "auto".
const (
	EnvShard            = "INFERBENCH_SHARD"       // "i/n", for engines not known here
	EnvJobIndex         = "JOB_COMPLETION_INDEX"   // Kubernetes Indexed Job (set by Kubernetes)
	EnvJobCompletions   = "JOB_COMPLETIONS"        // the Job's spec.completions (set by the manifest)
	EnvSlurmTaskID      = "SLURM_ARRAY_TASK_ID"    // Slurm job array
	EnvSlurmTaskCount   = "SLURM_ARRAY_TASK_COUNT" //
	EnvSlurmTaskMin     = "SLURM_ARRAY_TASK_MIN"   // the first index of --array (1-8 starts at 1)
	EnvSlurmTaskStep    = "SLURM_ARRAY_TASK_STEP"  // must be 1
	EnvGroup            = "INFERBENCH_GROUP"       // explicit run group
	EnvSlurmArrayJobID  = "SLURM_ARRAY_JOB_ID"     // the array's job id: one group per array
	EnvGitHubRunID      = "GITHUB_RUN_ID"          // one group per workflow run...
	EnvGitHubRunAttempt = "GITHUB_RUN_ATTEMPT"     // ...and attempt
	EnvHostname         = "HOSTNAME"               // a Kubernetes Indexed Job's pod: <job name>-<index>
)

// Parse reads a --shard value: "i/n", or "auto" to take it from the engine's environment
// (INFERBENCH_SHARD; JOB_COMPLETION_INDEX with JOB_COMPLETIONS; SLURM_ARRAY_TASK_ID with
// SLURM_ARRAY_TASK_COUNT, counted from SLURM_ARRAY_TASK_MIN).
func Parse(v string, lookupEnv func(string) (string, bool)) (Spec, error) {
	if v != "auto" {
		return parseSpec(v)
	}
	return FromEnv(lookupEnv)
}

func parseSpec(v string) (Spec, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(v), "/")
	idx, err1 := strconv.Atoi(i)
	cnt, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil {
		return Spec{}, fmt.Errorf("shard %q: want INDEX/COUNT with a 0-based index (0/4 to 3/4) or auto", v)
	}
	s := Spec{Index: idx, Count: cnt}
	return s, s.Validate()
}

// FromEnv finds the shard in the environment of a Kubernetes Indexed Job, a Slurm job array or
// INFERBENCH_SHARD.
func FromEnv(lookupEnv func(string) (string, bool)) (Spec, error) {
	get := func(k string) (string, bool) {
		v, ok := lookupEnv(k)
		return strings.TrimSpace(v), ok && strings.TrimSpace(v) != ""
	}
	num := func(k string) (int, error) {
		v, _ := get(k)
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("shard auto: %s=%q is not an integer", k, v)
		}
		return n, nil
	}
	// pair reads a scheduler's index and count; once the index is set, the count must be too.
	pair := func(indexKey, countKey, hint string) (index, count int, err error) {
		if _, ok := get(countKey); !ok {
			return 0, 0, fmt.Errorf("shard auto: %s is set but %s is not (%s)", indexKey, countKey, hint)
		}
		if index, err = num(indexKey); err != nil {
			return 0, 0, err
		}
		count, err = num(countKey)
		return index, count, err
	}
	if v, ok := get(EnvShard); ok {
		s, err := parseSpec(v)
		if err != nil {
			return Spec{}, fmt.Errorf("shard auto: %s: %w", EnvShard, err)
		}
		return s, nil
	}
	if _, ok := get(EnvJobIndex); ok {
		i, n, err := pair(EnvJobIndex, EnvJobCompletions, "set it to the Job's spec.completions; see examples/kubernetes")
		if err != nil {
			return Spec{}, err
		}
		s := Spec{Index: i, Count: n}
		if err := s.Validate(); err != nil {
			return Spec{}, fmt.Errorf("shard auto (Kubernetes): %w", err)
		}
		return s, nil
	}
	if _, ok := get(EnvSlurmTaskID); ok {
		id, n, err := pair(EnvSlurmTaskID, EnvSlurmTaskCount, "run as a job array: sbatch --array=0-N")
		if err != nil {
			return Spec{}, err
		}
		lo := 0
		if _, ok := get(EnvSlurmTaskMin); ok {
			if lo, err = num(EnvSlurmTaskMin); err != nil {
				return Spec{}, err
			}
		}
		if _, ok := get(EnvSlurmTaskStep); ok {
			step, err := num(EnvSlurmTaskStep)
			if err != nil {
				return Spec{}, err
			}
			if step != 1 {
				return Spec{}, fmt.Errorf("shard auto: %s=%d: the array must be a contiguous range (--array=0-%d)", EnvSlurmTaskStep, step, n-1)
			}
		}
		s := Spec{Index: id - lo, Count: n}
		if err := s.Validate(); err != nil {
			return Spec{}, fmt.Errorf("shard auto (Slurm): %w", err)
		}
		return s, nil
	}
	return Spec{}, fmt.Errorf("shard auto: no shard in the environment (want %s, %s with %s, or %s with %s)",
		EnvShard, EnvJobIndex, EnvJobCompletions, EnvSlurmTaskID, EnvSlurmTaskCount)
}

// GroupFromEnv derives a run group ID from the engine's job: INFERBENCH_GROUP, else the Slurm
// array's job ID, else the GitHub Actions run and attempt, else the Kubernetes Indexed Job's
// name. It returns "" when none is set.
//
// Kubernetes puts no job ID in a pod's environment, but the Job controller names an Indexed
// Job's pods' host <job name>-<index>, and sets JOB_COMPLETION_INDEX to the index: with both,
// and HOSTNAME ending in -<index>, the group is the Job's name (what the example manifests pass
// as INFERBENCH_GROUP through the downward API). A pod whose template sets its own hostname has
// no such suffix, and gets no group.
func GroupFromEnv(lookupEnv func(string) (string, bool)) string {
	get := func(k string) string {
		v, _ := lookupEnv(k)
		return strings.TrimSpace(v)
	}
	switch {
	case get(EnvGroup) != "":
		return get(EnvGroup)
	case get(EnvSlurmArrayJobID) != "":
		return "slurm-" + get(EnvSlurmArrayJobID)
	case get(EnvGitHubRunID) != "":
		a := get(EnvGitHubRunAttempt)
		if a == "" {
			a = "1"
		}
		return "gha-" + get(EnvGitHubRunID) + "-" + a
	case get(EnvJobIndex) != "":
		suffix := "-" + get(EnvJobIndex)
		if host := get(EnvHostname); len(host) > len(suffix) && strings.HasSuffix(host, suffix) {
			return strings.TrimSuffix(host, suffix)
		}
	}
	return ""
}

// Item is one scenario to place: its ID ("benchmark/scenario") and its expected cost (seconds;
// 0 when unknown).
type Item struct {
	ID   string
	Cost float64
}

// Plan describes an assignment: how it balanced, and a digest that is equal for every process
// that planned the same scenarios with the same costs and count.
type Plan struct {
	Count     int    `json:"count"`
	Scenarios int    `json:"scenarios"`
	Balance   string `json:"balance"` // "count" or "cost"
	// Digest is a SHA-256 prefix over the sorted IDs, their costs and the count.
	Digest string `json:"digest"`
	// Loads is each shard's expected cost (Balance "cost") or scenario count.
	Loads []float64 `json:"loads"`
}

// ErrDuplicate is returned (wrapped) when two items share an ID.
var ErrDuplicate = errors.New("duplicate scenario id")

// Assign places every item on one of n shards and returns the shard of each item, in the order
// given. The result depends only on the set of (ID, cost) pairs and n.
func Assign(items []Item, n int) ([]int, Plan, error) {
	if n < 1 || n > MaxCount {
		return nil, Plan{}, fmt.Errorf("shard count %d: want 1 to %d", n, MaxCount)
	}
	order := make([]int, len(items))
	keys := make([]uint64, len(items))
	for i, it := range items {
		order[i] = i
		keys[i] = hashID(it.ID)
	}
	// Canonical order: by ID. Duplicates are adjacent.
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(items[a].ID, items[b].ID) })
	for k := 1; k < len(order); k++ {
		if items[order[k]].ID == items[order[k-1]].ID {
			return nil, Plan{}, fmt.Errorf("%w %q", ErrDuplicate, items[order[k]].ID)
		}
	}
	costs, balance := fillCosts(items, order)
	plan := Plan{Count: n, Scenarios: len(items), Balance: balance, Digest: digest(items, order, costs, n), Loads: make([]float64, n)}
	out := make([]int, len(items))
	switch balance {
	case "count":
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
		for k, i := range order {
			out[i] = k % n
			plan.Loads[k%n]++
		}
	case "cost":
		// Longest processing time first: ties broken by hash, then ID (order is by ID).
		slices.SortStableFunc(order, func(a, b int) int {
			if c := cmp.Compare(costs[b], costs[a]); c != 0 {
				return c
			}
			return cmp.Compare(keys[a], keys[b])
		})
		h := newLoadHeap(n)
		for _, i := range order {
			s := h.min()
			out[i] = s
			h.add(s, costs[i])
		}
		copy(plan.Loads, h.load)
	}
	return out, plan, nil
}

// fillCosts returns each item's cost for balancing: unknown (zero, negative, NaN) costs take the
// median of the known ones. With no known cost the plan balances by count.
func fillCosts(items []Item, order []int) ([]float64, string) {
	var known []float64
	for _, i := range order {
		if c := items[i].Cost; c > 0 && !math.IsInf(c, 1) {
			known = append(known, c)
		}
	}
	if len(known) == 0 {
		return nil, "count"
	}
	slices.Sort(known)
	med := known[len(known)/2]
	costs := make([]float64, len(items))
	for i, it := range items {
		c := it.Cost
		if !(c > 0) || math.IsInf(c, 1) {
			c = med
		}
		costs[i] = c
	}
	return costs, "cost"
}

func hashID(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	// FNV-1a alone keeps IDs that differ in their last byte in order; a SplitMix64 finalizer
	// spreads them.
	z := h.Sum64()
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func digest(items []Item, order []int, costs []float64, n int) string {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
	for _, i := range order {
		h.Write([]byte(items[i].ID))
		h.Write([]byte{0})
		if costs != nil {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(costs[i]))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// loadHeap finds the least loaded shard (lowest index among equals) in O(log n).
type loadHeap struct {
	load []float64
	heap []int // shard indices
	pos  []int
}

func newLoadHeap(n int) *loadHeap {
	h := &loadHeap{load: make([]float64, n), heap: make([]int, n), pos: make([]int, n)}
	for i := range n {
		h.heap[i], h.pos[i] = i, i
	}
	return h
}

func (h *loadHeap) less(a, b int) bool {
	sa, sb := h.heap[a], h.heap[b]
	if h.load[sa] != h.load[sb] {
		return h.load[sa] < h.load[sb]
	}
	return sa < sb
}

func (h *loadHeap) min() int { return h.heap[0] }

// add raises the load of shard s, which is at the top, and sifts it down.
func (h *loadHeap) add(s int, c float64) {
	h.load[s] += c
	i := h.pos[s]
	n := len(h.heap)
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h.less(l, m) {
			m = l
		}
		if r < n && h.less(r, m) {
			m = r
		}
		if m == i {
			return
		}
		h.heap[i], h.heap[m] = h.heap[m], h.heap[i]
		h.pos[h.heap[i]], h.pos[h.heap[m]] = i, m
		i = m
	}
}

// Select returns the indices (into items) that shard s runs, in the order given, and the plan.
func Select(items []Item, s Spec) ([]int, Plan, error) {
	if err := s.Validate(); err != nil {
		return nil, Plan{}, err
	}
	where, plan, err := Assign(items, s.Count)
	if err != nil {
		return nil, Plan{}, err
	}
	var mine []int
	for i, w := range where {
		if w == s.Index {
			mine = append(mine, i)
		}
	}
	return mine, plan, nil
}
