package run

import (
	"context"
	"fmt"
	"io"
)

// Plan writes the scenarios Run would run with o, its shard's part when o has one, to w, one a
// line with the file that defines it (`inferbench run --dry-run`); it runs nothing.
func Plan(ctx context.Context, o Options, w io.Writer) error {
	scs, err := Select(o.Selection, Env{Dir: o.Dir, Vars: o.Env})
	if err != nil {
		return err
	}
	if o.Scaleout.Group == "" {
		// The shard's scenarios do not depend on the group: a dry run lists them without one.
		o.Scaleout.Group = "dry-run"
	}
	if scs, _, err = selectShard(ctx, o, scs); err != nil {
		return err
	}
	for _, sc := range scs {
		fmt.Fprintf(w, "%s\t%s\n", sc.ID(), sc.Benchmark.Source())
	}
	return nil
}
