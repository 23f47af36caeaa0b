package exec

import (
	"fmt"
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
// is the sum of their totals. One measured iteration's callgrind files are kept.
type counter struct {
	vg      callgrind.Valgrind
	keepDir string // the scenario's profiles folder; "" keeps nothing

	mu   sync.Mutex
	kept []string
}

func newCounter(profileDir string) (*counter, error) {
	vg, err := callgrind.Find()
	if err != nil {
		return nil, err
	}
	return &counter{vg: vg, keepDir: profileDir}, nil
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
// comes first), keeps the files of the first measured iteration, and removes tmp.
func (k *counter) collect(tmp string, pid int, measured bool) (map[string]float64, error) {
	defer os.RemoveAll(tmp)
	files, err := filepath.Glob(filepath.Join(tmp, "callgrind.out.*"))
	if err != nil {
		return nil, err
	}
	pidOf := func(f string) int {
		n, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(f), "callgrind.out."))
		return n
	}
	slices.SortFunc(files, func(a, b string) int {
		pa, pb := pidOf(a), pidOf(b)
		switch {
		case pa == pid:
			return -1
		case pb == pid:
			return 1
		}
		return pa - pb
	})
	c, err := callgrind.ReadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("instruction mode: %w", err)
	}
	if measured && k.keepDir != "" {
		k.mu.Lock()
		if k.kept == nil {
			k.kept, err = callgrind.Keep(k.keepDir, files)
			if k.kept == nil {
				k.kept = []string{}
			}
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

// Kept implements subject.Counter: the callgrind files of the first measured iteration.
func (c *Command) Kept() []string {
	if c.count == nil {
		return nil
	}
	c.count.mu.Lock()
	defer c.count.mu.Unlock()
	return slices.Clone(c.count.kept)
}
