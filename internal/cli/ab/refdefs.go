package ab

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/inferbench/inferbench/internal/base/gitref"
	"github.com/inferbench/inferbench/run"
)

// carryDefinitions copies into the worktree each definition file named on the command line
// (sel.Paths) that the ref does not have: a file the working tree holds and the ref does not is
// the measurement's settings (a definition written for this run, such as the pytest plugin's for
// --inferbench-baseline-ref), not the code under test, so both sides run it, each in its own tree.
// A folder named, or a file the ref has, is the ref's own. It returns the files carried, as the
// command line named them.
func carryDefinitions(paths []string, env run.Env, wt *gitref.Worktree) ([]string, error) {
	var carried []string
	for _, p := range paths {
		local := env.Path(p)
		fi, err := os.Stat(local)
		if err != nil || !fi.Mode().IsRegular() {
			continue // run.Select names what is missing
		}
		at, err := wt.Map(local)
		if err != nil {
			continue // outside the tree: the pairing says so
		}
		if _, err := os.Stat(at); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		data, err := os.ReadFile(local)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(at), 0o755)
		}
		if err == nil {
			err = os.WriteFile(at, data, 0o644)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: carrying the definition to the ref's worktree: %w", p, err)
		}
		carried = append(carried, p)
	}
	return carried, nil
}
