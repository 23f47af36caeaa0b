package explain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/inferbench/inferbench/internal/base/readall"
)

// ChunkFile is the JSON the worker writes for each chunk of profiled calls (python-K.json from
// cProfile, torch-K.json from torch.profiler): docs/worker-protocol.md describes it.
type ChunkFile struct {
	Source string  `json:"source"` // "python", "torch", or "bytecode" (instruction mode's bytecode.json)
	Unit   string  `json:"unit"`   // "ms"; "op" (bytecode instructions)
	Calls  float64 `json:"calls"`  // calls of the subject in the chunk
	// Exact is true for counts that do not vary between runs of the same code (bytecode
	// instructions): explain needs no test to name a change.
	Exact bool `json:"exact,omitempty"`
	// Entries are the functions (cProfile: tottime as self, cumtime as incl, ncalls as count) or
	// operators (torch: self CPU time, CPU time with children; on CUDA the kernels' device time
	// as entries of their own, named "cuda: KERNEL").
	Entries []ChunkEntry `json:"entries"`
	// Edges are calls from one entry to another with the callee's cost along that edge (cProfile's
	// callers): explain folds them into the stacks of the picture when Stacks is absent.
	Edges []ChunkEdge `json:"edges,omitempty"`
	// Stacks are folded call stacks ("a;b;c") with the self cost of their last frame.
	Stacks map[string]float64 `json:"stacks,omitempty"`
}

// ChunkEntry is one function's or operator's cost in a chunk.
type ChunkEntry struct {
	Name  string  `json:"name"`
	Count float64 `json:"count"`
	Self  float64 `json:"self"`
	Incl  float64 `json:"incl"`
}

// ChunkEdge is the cost of callee when called from caller.
type ChunkEdge struct {
	Caller string  `json:"caller"`
	Callee string  `json:"callee"`
	Incl   float64 `json:"incl"`
}

// ChunksFile is a JSON of several chunks of one source: the worker's operators.json, each chunk
// one call with every torch operator counted apart (docs/worker-protocol.md). The chunks take
// Source, Unit and Exact from it.
type ChunksFile struct {
	Source string      `json:"source"` // "operators"
	Unit   string      `json:"unit"`   // "Ir"
	Exact  bool        `json:"exact,omitempty"`
	Chunks []ChunkFile `json:"chunks"`
}

// decodeJSON decodes the JSON document r into v; a syntax or type error names its line.
func decodeJSON(r io.Reader, v any) error {
	data, err := readall.Into(r, nil, MaxProfileSize, "profile")
	if err != nil {
		return err
	}
	err = json.Unmarshal(data, v)
	var offset int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		offset = se.Offset
	case errors.As(err, &te):
		offset = te.Offset
	}
	if offset >= 0 && offset <= int64(len(data)) {
		return fmt.Errorf("line %d: %w", 1+bytes.Count(data[:offset], []byte("\n")), err)
	}
	return err
}

// addChunksJSON reads a ChunksFile into p.
func (p *Profile) addChunksJSON(r io.Reader) error {
	var f ChunksFile
	if err := decodeJSON(r, &f); err != nil {
		return fmt.Errorf("decode profile chunks: %w", err)
	}
	if len(f.Chunks) == 0 {
		return fmt.Errorf("no chunks: want the counted calls' chunks (%w)", ErrNoProfile)
	}
	for i, cf := range f.Chunks {
		cf.Source, cf.Unit, cf.Exact = f.Source, f.Unit, f.Exact
		if err := p.addChunk(cf); err != nil {
			return fmt.Errorf("chunk %d: %w", i+1, err)
		}
	}
	return nil
}

// addChunkJSON reads one ChunkFile into p.
func (p *Profile) addChunkJSON(r io.Reader) error {
	var cf ChunkFile
	if err := decodeJSON(r, &cf); err != nil {
		return fmt.Errorf("decode profile chunk: %w", err)
	}
	return p.addChunk(cf)
}

// addChunk adds one chunk to p.
func (p *Profile) addChunk(cf ChunkFile) error {
	if cf.Calls <= 0 || checkCost(cf.Calls) != nil {
		return fmt.Errorf(`"calls" is %v: want the chunk's calls of the subject (a positive number)`, cf.Calls)
	}
	if err := cf.check(); err != nil {
		return err
	}
	switch {
	case p.Source == "":
		p.Source, p.Unit, p.Exact = cf.Source, cf.Unit, cf.Exact
	case p.Source != cf.Source || p.Unit != cf.Unit || p.Exact != cf.Exact:
		return fmt.Errorf("chunk of source %q in %s, after chunks of %q in %s: one scenario's chunks come from one profiler", cf.Source, cf.Unit, p.Source, p.Unit)
	}
	if cf.Source == SourcePython || cf.Source == SourceBytecode {
		cf.byIdentity()
	}
	c := newChunk(cf.Calls)
	for _, e := range cf.Entries {
		c.Self[e.Name] += e.Self
		c.Incl[e.Name] += e.Incl
		c.Count[e.Name] += e.Count
	}
	p.Chunks = append(p.Chunks, c)
	switch {
	case len(cf.Stacks) > 0:
		for k, v := range cf.Stacks {
			p.Stacks[k] += v
		}
	default:
		g := newGraph()
		for _, e := range cf.Entries {
			g.self[e.Name] += e.Self
			g.incl[e.Name] += e.Incl
		}
		for _, e := range cf.Edges {
			g.edge(e.Caller, e.Callee, e.Incl)
		}
		g.fold(p.Stacks)
	}
	return nil
}

// lineOf is a Python function's name as the worker writes it, "qualname (file.py:LINE)".
var lineOf = regexp.MustCompile(`^(.*) \(([^()]*):[0-9]+\)$`)

// identity is a Python function's name without its first line, "qualname (file.py)": the same
// function wherever an edit above it moved it (a function keyed by its line was "removed" and
// "added" below every edit, and ranked first). Two functions of one file with one qualified
// name (two lambdas, a redefinition) are then one entry.
func identity(name string) string {
	if m := lineOf.FindStringSubmatch(name); m != nil {
		return m[1] + " (" + m[2] + ")"
	}
	return name
}

// byIdentity renames cf's Python functions to their identity, in its entries, edges and stacks.
func (cf *ChunkFile) byIdentity() {
	for i := range cf.Entries {
		cf.Entries[i].Name = identity(cf.Entries[i].Name)
	}
	for i := range cf.Edges {
		cf.Edges[i].Caller, cf.Edges[i].Callee = identity(cf.Edges[i].Caller), identity(cf.Edges[i].Callee)
	}
	if len(cf.Stacks) > 0 {
		stacks := make(map[string]float64, len(cf.Stacks))
		for k, v := range cf.Stacks {
			frames := strings.Split(k, ";")
			for i, f := range frames {
				frames[i] = identity(f)
			}
			stacks[strings.Join(frames, ";")] += v
		}
		cf.Stacks = stacks
	}
}

// check returns an error naming the first cost of cf that is not one (checkCost).
func (cf *ChunkFile) check() error {
	for i, e := range cf.Entries {
		for _, v := range []struct {
			name string
			v    float64
		}{{"self", e.Self}, {"incl", e.Incl}, {"count", e.Count}} {
			if err := checkCost(v.v); err != nil {
				return fmt.Errorf("entries[%d] (%q): %s: %w", i, e.Name, v.name, err)
			}
		}
	}
	for i, e := range cf.Edges {
		if err := checkCost(e.Incl); err != nil {
			return fmt.Errorf("edges[%d] (%q to %q): incl: %w", i, e.Caller, e.Callee, err)
		}
	}
	for k, v := range cf.Stacks {
		if err := checkCost(v); err != nil {
			return fmt.Errorf("stacks[%q]: %w", k, err)
		}
	}
	return nil
}

// stackKey joins frames into a folded stack; a frame's own ';' would split it, so it is replaced.
func stackKey(frames []string) string {
	clean := make([]string, len(frames))
	for i, f := range frames {
		clean[i] = strings.ReplaceAll(f, ";", ",")
	}
	return strings.Join(clean, ";")
}
