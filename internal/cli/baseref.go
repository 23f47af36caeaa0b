package cli

import (
	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/internal/cli/ab"
	"github.com/inferbench/inferbench/internal/cli/progress"
	"github.com/inferbench/inferbench/run"
)

// runBaselineRef is `run --baseline-ref REF`: the selected scenarios at REF and in the working
// tree, interleaved in this job (ab.RefRun).
func runBaselineRef(cmd *cobra.Command, o *IO, rf *runFlags, opts run.Options) error {
	f := cmd.Flags()
	for _, other := range []string{"baseline", "shard", "agents", "profile", "monitor-overhead", "metrics-addr", "export", "alert", "alerts-file", "min-time", "max-time"} {
		if fl := f.Lookup(other); fl != nil && fl.Changed {
			return usageErr("--baseline-ref with --%s: a run against a ref compares with the ref alone, measured in this job; drop one of them", other)
		}
	}
	ro := ab.RefOptions{Ref: rf.baselineRef, Run: opts}
	if f.Changed("alpha") {
		ro.Alpha = opts.Compare.Alpha
	}
	if progress.Interactive(o.Stderr, o.LookupEnv) {
		ro.Progress = o.Stderr
	}
	_, err := ab.RefRun(cmd.Context(), ro)
	return err
}
