package recorded

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/explain"
)

// ExplainOptions say what Source.Explain explains and where it writes.
type ExplainOptions struct {
	Config compare.Config // how the regressed scenarios are found
	// All explains every scenario of both runs, not only the regressed ones; with no regression
	// every scenario is explained anyway.
	All     bool
	Explain explain.Options
	Format  string // text, markdown (md) or json
	Output  string // "" or "-" is Stdout
	Stdout  io.Writer
}

// Explain compares the runs oldRef and newRef name, and explains their regressed scenarios (or
// all, with o.All or when none regressed) from the profiles in their run folders.
func (rs *Source) Explain(ctx context.Context, oldRef, newRef string, o ExplainOptions) ([]explain.Scenario, error) {
	switch o.Format {
	case "text", "markdown", "md", "json":
	default:
		return nil, exit.UsageError(fmt.Errorf("--format %q: want text, markdown or json", o.Format))
	}
	old, oldDir, nw, newDir, rep, err := rs.comparePair(ctx, oldRef, newRef, o.Config)
	if err != nil {
		return nil, err
	}
	pairs := explain.Pairs(old, nw, rep, o.All)
	if len(pairs) == 0 && !o.All {
		pairs = explain.Pairs(old, nw, rep, true)
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("%s and %s have no scenario in common to explain (compare %s %s says why)", oldRef, newRef, oldRef, newRef)
	}
	xs := explain.Runs(oldDir, newDir, pairs, o.Explain)
	var buf bytes.Buffer
	if err := explain.Render(&buf, xs, o.Format); err != nil {
		return xs, err
	}
	if o.Output == "-" || o.Output == "" {
		_, err = o.Stdout.Write(buf.Bytes())
	} else {
		err = os.WriteFile(rs.Env.Path(o.Output), buf.Bytes(), 0o644)
	}
	if err != nil {
		return xs, err
	}
	return xs, unreadable(xs)
}

// unreadable returns an error naming the scenarios whose profiles are there but could not be
// read (outside the run folder, not a regular file, over a limit, corrupt): explain's exit 1, its
// explanation of the others written first.
func unreadable(xs []explain.Scenario) error {
	var bad []string
	for _, x := range xs {
		if x.Unreadable {
			bad = append(bad, x.Benchmark+"/"+x.Scenario+": "+x.Missing)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%d scenario(s) not explained, a profile could not be read: %s", len(bad), strings.Join(bad, "; "))
}
