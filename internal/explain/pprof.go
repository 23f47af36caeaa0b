package explain

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// The pprof labels the gofunc subject puts on its profiled calls: each chunk's number and its
// calls of the function. Samples without them (the garbage collector's workers, other goroutines)
// are not the function's and are left out.
const (
	LabelChunk = "inferbench_chunk"
	LabelCalls = "inferbench_calls"
)

// harnessPrefix is the gofunc subject's methods, whose frames call the profiled function: the
// stacks are cut below the last of them, so they start at the function itself.
const harnessPrefix = "github.com/inferbench/inferbench/internal/kind/gofunc.(*Subject)."

// ReadPprof reads a Go CPU profile whose samples carry the chunk labels (LabelChunk, LabelCalls):
// at most MaxProfileSize bytes, inflated to at most MaxPprofInflated.
func ReadPprof(r io.Reader) (*Profile, error) {
	data, err := readPprofData(r)
	if err != nil {
		return nil, err
	}
	pp, err := profile.ParseData(data)
	if err != nil {
		return nil, err
	}
	vi := -1
	for i, st := range pp.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			vi = i
		}
	}
	if vi < 0 {
		return nil, fmt.Errorf("not a CPU profile (no cpu/nanoseconds sample type)")
	}
	p := &Profile{Source: SourceGo, Unit: "ms", Stacks: map[string]float64{}}
	index := map[string]int{}
	var frames []string
	for _, s := range pp.Sample {
		ck, calls := s.Label[LabelChunk], s.Label[LabelCalls]
		if len(ck) != 1 || len(calls) != 1 {
			continue
		}
		n, err := strconv.ParseFloat(calls[0], 64)
		if err != nil || n <= 0 || checkCost(n) != nil {
			return nil, fmt.Errorf("label %s=%q: want a positive number", LabelCalls, calls[0])
		}
		if vi >= len(s.Value) || s.Value[vi] < 0 {
			return nil, fmt.Errorf("a sample of chunk %s has no CPU time, or a negative one", ck[0])
		}
		i, ok := index[ck[0]]
		if !ok {
			i = len(p.Chunks)
			index[ck[0]] = i
			p.Chunks = append(p.Chunks, newChunk(n))
		}
		c := &p.Chunks[i]
		v := float64(s.Value[vi]) / 1e6
		frames = frames[:0]
		for _, loc := range s.Location { // leaf first; a location's lines innermost first
			for _, ln := range loc.Line {
				if ln.Function != nil {
					frames = append(frames, ln.Function.Name)
				}
			}
		}
		slices.Reverse(frames) // root first
		for j := len(frames) - 1; j >= 0; j-- {
			if strings.HasPrefix(frames[j], harnessPrefix) {
				frames = frames[j+1:]
				break
			}
		}
		if len(frames) == 0 {
			continue
		}
		c.Self[frames[len(frames)-1]] += v
		seen := map[string]bool{}
		for _, f := range frames {
			if !seen[f] {
				seen[f] = true
				c.Incl[f] += v
			}
		}
		p.Stacks[strings.Join(frames, ";")] += v
	}
	// Chunks in the order of their numbers, so that files and reruns line up.
	order := make([]string, 0, len(index))
	for k := range index {
		order = append(order, k)
	}
	slices.SortFunc(order, func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
	chunks := make([]Chunk, len(order))
	for j, k := range order {
		chunks[j] = p.Chunks[index[k]]
	}
	p.Chunks = chunks
	if len(chunks) == 0 {
		return nil, fmt.Errorf("no sample carries the labels %s and %s: a profile of an older inferbench (profile again), or calls that ran shorter than the profiler's %v ms period", LabelChunk, LabelCalls, float64(pp.Period)/1e6)
	}
	p.finishStacks()
	return p, nil
}
