package exec

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/inferbench/inferbench/internal/base/callgrind"
)

// counter is instruction mode for a command (subject.Spec.Measure): every iteration runs the
// whole command, and the processes it starts, under valgrind's callgrind; the iteration's count
// is the sum of their totals (a process dumps its counts before each fork, so that a child
// that does not exec does not count its parent's work again: callgrind.Options.Children). The callgrind files of the first measured iterations (keepRuns)
// are kept, each iteration's in a folder of its own: explain compares them as chunks, so that a
// function whose count varies between identical runs (a Go program's runtime, whose work depends
// on its threads' timing) is told from one that changed.
type counter struct {
	vg       callgrind.Valgrind
	keepDir  string // the scenario's profiles folder; "" keeps nothing
	keepRuns int    // how many measured iterations are kept
	redact   func(string) string

	mu   sync.Mutex
	kept []string
	runs int // measured iterations kept so far
}

// keepRuns is how many measured iterations' callgrind files a command keeps: a few runs give
// each function's count its spread between identical runs; each run's files are some hundreds of
// kilobytes for a small Go program (about 440 KB), more for a large one.
const keepRuns = 5

func newCounter(ctx context.Context, profileDir string, redact func(string) string) (*counter, error) {
	vg, err := callgrind.FindContext(ctx)
	if err != nil {
		return nil, err
	}
	return &counter{vg: vg, keepDir: profileDir, keepRuns: keepRuns, redact: redact}, nil
}

// prepare returns the argv and environment that count argv in a new temporary folder, and the
// folder.
func (k *counter) prepare(argv, env []string) (cargv, cenv []string, tmp string, err error) {
	tmp, err = os.MkdirTemp("", "inferbench-callgrind-")
	if err != nil {
		return nil, nil, "", fmt.Errorf("instruction mode: %w", err)
	}
	o := callgrind.Options{Out: filepath.Join(tmp, "callgrind.out.%p"), AtStart: true, Children: true}
	return k.vg.Args(o, argv...), callgrind.Environ(env), tmp, nil
}

// collect reads what the iteration counted in tmp (pid is the command's process, whose file
// comes first), keeps the files of the first keepRuns measured iterations (the first in keepDir,
// the next in keepDir/iteration-2, -3, ...), and removes tmp.
func (k *counter) collect(tmp string, pid int, measured bool) (map[string]float64, error) {
	defer os.RemoveAll(tmp)
	files, err := filepath.Glob(filepath.Join(tmp, "callgrind.out.*"))
	if err != nil {
		return nil, err
	}
	// callgrind.out.PID, and callgrind.out.PID.N for the counts a process dumped before it
	// forked: by process (the command's first), each process's dumps in order, its last file
	// (at its exit) after them.
	type name struct{ pid, part int }
	parse := func(f string) name {
		p, part, dumped := strings.Cut(strings.TrimPrefix(filepath.Base(f), "callgrind.out."), ".")
		n := name{part: math.MaxInt}
		n.pid, _ = strconv.Atoi(p)
		if dumped {
			n.part, _ = strconv.Atoi(part)
		}
		return n
	}
	slices.SortFunc(files, func(a, b string) int {
		na, nb := parse(a), parse(b)
		switch {
		case na.pid == nb.pid:
			return cmp.Compare(na.part, nb.part)
		case na.pid == pid:
			return -1
		case nb.pid == pid:
			return 1
		}
		return cmp.Compare(na.pid, nb.pid)
	})
	c, err := callgrind.ReadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("instruction mode: %w", err)
	}
	if measured && k.keepDir != "" {
		k.mu.Lock()
		if k.runs < k.keepRuns {
			k.runs++
			dir := k.keepDir
			if k.runs == 1 {
				// An earlier run's iterations in the same folder are not this run's.
				old, _ := filepath.Glob(filepath.Join(k.keepDir, "iteration-*"))
				for _, d := range old {
					os.RemoveAll(d)
				}
			} else {
				dir = filepath.Join(k.keepDir, "iteration-"+strconv.Itoa(k.runs))
			}
			var kept []string
			kept, err = callgrind.Keep(dir, files, k.redact)
			k.kept = append(k.kept, kept...)
		}
		k.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("instruction mode: keeping the callgrind files: %w", err)
		}
	}
	return c.Values(), nil
}

// Identity implements subject.Counter.
func (c *Command) Identity() map[string]string {
	if c.count == nil {
		return nil
	}
	return c.count.vg.Identity()
}

// Kept implements subject.Counter: the callgrind files of the first measured iterations, the
// first iteration's first.
func (c *Command) Kept() []string {
	if c.count == nil {
		return nil
	}
	c.count.mu.Lock()
	defer c.count.mu.Unlock()
	return slices.Clone(c.count.kept)
}
