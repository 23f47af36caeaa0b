package explain

import (
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Source names what measured a profile.
const (
	SourceGo        = "go"        // runtime/pprof CPU samples, chunks told apart by a pprof label
	SourcePython    = "python"    // cProfile, per function
	SourceTorch     = "torch"     // torch.profiler, per operator and input shapes
	SourceCallgrind = "callgrind" // valgrind's callgrind, instructions per function
	SourceBytecode  = "bytecode"  // the worker's count of Python bytecode instructions per function
	SourceOperators = "operators" // the worker's callgrind count of each torch operator (and shapes)
)

// Chunk is one independent group of profiled calls.
type Chunk struct {
	// Calls is how many calls of the subject the chunk made: costs are divided by it.
	Calls float64
	// Self is each entry's own cost in the chunk (in the profile's Unit), Incl its cost with
	// what it called, Count how many times it ran (0 when unknown).
	Self, Incl, Count map[string]float64
}

func newChunk(calls float64) Chunk {
	return Chunk{Calls: calls, Self: map[string]float64{}, Incl: map[string]float64{}, Count: map[string]float64{}}
}

// Profile is one scenario's profile: its chunks, and the call stacks for the picture.
type Profile struct {
	Source string
	// Unit of the costs: "ms" for times, "Ir" (instructions) for callgrind.
	Unit string
	// Exact costs are counts (instructions), the same in identical runs for most programs: a
	// change needs no test. An entry whose count varies between the chunks of one profile (a Go
	// program's runtime, whose work depends on its scheduling) is tested like a timed one.
	Exact  bool
	Chunks []Chunk
	// Stacks are the folded call stacks ("root;caller;callee") with the self cost of their last
	// frame per call of the subject, over all chunks.
	Stacks map[string]float64
	// Files are the files it was read from, relative to the run folder.
	Files []string
}

// Calls returns the subject's calls over all chunks.
func (p *Profile) Calls() float64 {
	var n float64
	for _, c := range p.Chunks {
		n += c.Calls
	}
	return n
}

// ErrNoProfile is returned by Load when a scenario has no profile explain reads.
var ErrNoProfile = errors.New("no profile explain reads (run with --profile)")

// Load reads a scenario's profile from files (its run.json `profiles`, relative to the run folder
// dir): instruction mode's exact counts first, the worker's torch operator counts
// (operators.json), its Python bytecode counts (bytecode.json) or callgrind files
// (callgrind.out*; those of one folder are one counted call, a chunk), then the timing profilers'
// Go CPU profile (cpu.pprof) or the worker's chunks (python-K.json, torch-K.json). When several
// kinds are there, the first in that order is read: a Python worker counted in instruction mode
// keeps both a callgrind file (the interpreter's C functions) and bytecode.json (its Python
// functions), and the Python functions are what its code changes; one that ran torch operators
// keeps operators.json too, and a torch model's work is in its operators (Runs compares its
// bytecode.json beside them, for the Python code between the operators). It returns
// ErrNoProfile when none is.
func Load(dir string, files []string) (*Profile, error) {
	var pprofs, chunks, callgrinds, bytecodes, operators []string
	for _, f := range files {
		base := filepath.Base(f)
		switch {
		case base == "operators.json":
			operators = append(operators, f)
		case base == "bytecode.json":
			bytecodes = append(bytecodes, f)
		case base == "cpu.pprof":
			pprofs = append(pprofs, f)
		case (strings.HasPrefix(base, "python-") || strings.HasPrefix(base, "torch-")) && strings.HasSuffix(base, ".json"):
			chunks = append(chunks, f)
		case strings.HasPrefix(base, "callgrind.out"):
			callgrinds = append(callgrinds, f)
		}
	}
	var p *Profile
	var err error
	switch {
	case len(operators) > 0:
		p, files, err = readChunks(dir, operators[:1], (*Profile).addChunksJSON)
	case len(bytecodes) > 0:
		p, files, err = readChunks(dir, bytecodes[:1], (*Profile).addChunkJSON)
	case len(callgrinds) > 0:
		p, err = readCallgrinds(dir, callgrinds)
		files = callgrinds
	case len(pprofs) > 0:
		var fh io.ReadCloser
		if fh, err = openProfile(dir, pprofs[0]); err != nil {
			return nil, err
		}
		p, err = ReadPprof(fh)
		fh.Close()
		if err != nil {
			err = fmt.Errorf("%s: %w", filepath.Join(dir, pprofs[0]), err)
		}
		files = pprofs[:1]
	case len(chunks) > 0:
		p, files, err = readChunks(dir, chunks, (*Profile).addChunkJSON)
	default:
		return nil, ErrNoProfile
	}
	if err != nil {
		return nil, err // naming its file
	}
	if err := p.checkSums(); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, files[0]), err)
	}
	p.Files = files
	if len(p.Chunks) == 0 {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, files[0]), ErrNoProfile)
	}
	return p, nil
}

// readChunks reads each file of list (relative to dir), in order, into one profile with add:
// a file of one chunk, or of several (operators.json). It returns list sorted.
func readChunks(dir string, list []string, add func(*Profile, io.Reader) error) (*Profile, []string, error) {
	slices.Sort(list)
	p := &Profile{Stacks: map[string]float64{}}
	for _, f := range list {
		fh, err := openProfile(dir, f)
		if err != nil {
			return nil, list, err
		}
		err = add(p, fh)
		fh.Close()
		if err != nil {
			return nil, list, fmt.Errorf("%s: %w", filepath.Join(dir, f), err)
		}
	}
	p.finishStacks()
	return p, list, nil
}

// readCallgrinds reads callgrind files (relative to dir) into one exact profile. The files of
// one folder are one counted run (the command's process and those it started): one chunk. A
// command keeps several runs, each in a folder of its own.
func readCallgrinds(dir string, callgrinds []string) (*Profile, error) {
	slices.SortFunc(callgrinds, func(a, b string) int {
		if c := strings.Compare(path.Dir(filepath.ToSlash(a)), path.Dir(filepath.ToSlash(b))); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	p := &Profile{Source: SourceCallgrind, Unit: "Ir", Exact: true, Stacks: map[string]float64{}}
	chunkDir := ""
	for i, f := range callgrinds {
		if d := path.Dir(filepath.ToSlash(f)); i == 0 || d != chunkDir {
			chunkDir = d
			p.Chunks = append(p.Chunks, newChunk(1))
		}
		fh, err := openProfile(dir, f)
		if err != nil {
			return nil, err
		}
		err = p.addCallgrind(fh)
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, f), err)
		}
	}
	p.finishStacks()
	return p, nil
}

// finishStacks turns the stacks summed over chunks into cost per call.
func (p *Profile) finishStacks() {
	n := p.Calls()
	if n <= 0 {
		return
	}
	for k, v := range p.Stacks {
		p.Stacks[k] = v / n
	}
}
