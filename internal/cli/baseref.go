package cli

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/internal/cli/ab"
	"github.com/inferbench/inferbench/internal/cli/progress"
	"github.com/inferbench/inferbench/run"
)

// refRefused are the run flags that a run against a ref does not do, with why: each is refused
// when set, never silently ignored.
var refRefused = []struct{ flags, why string }{
	{"baseline", "a run against a ref compares with the ref alone, measured in this job"},
	{"shard shard-costs agents agent barrier-timeout", "a run against a ref measures both sides in one job, not shards or agents"},
	{"profile", "profile the working tree with a run of its own (`inferbench run --profile N`); explain reads it"},
	{"min-time", "a run against a ref adds pairs until its answer is decided; --max-time bounds each scenario's pairs"},
	{"monitor-overhead", "the overhead pass runs each scenario again without monitors, which a run against a ref does not do (its sides are sampled during their own blocks); measure the overhead with a run of its own"},
	{"keep-samples", "a run against a ref keeps every measured call"},
}

// runBaselineRef is `run --baseline-ref REF`: the selected scenarios at REF and in the working
// tree, interleaved in this job (ab.RefRun).
func runBaselineRef(cmd *cobra.Command, o *IO, rf *runFlags, opts run.Options) error {
	f := cmd.Flags()
	for _, r := range refRefused {
		for _, other := range strings.Fields(r.flags) {
			if fl := f.Lookup(other); fl != nil && fl.Changed {
				return usageErr("--baseline-ref with --%s: %s; drop one of them", other, r.why)
			}
		}
	}
	ro := ab.RefOptions{Ref: rf.baselineRef, Run: opts}
	if f.Changed("alpha") {
		ro.Alpha = opts.Compare.Alpha
	}
	if progress.Interactive(o.Stderr, o.LookupEnv) {
		ro.Progress = o.Stderr // a line per block: the progress bar counts the engine's calls
	} else {
		ro.Run.Log = consoleHandler(o.Stderr, opts.LogLevel, f.Changed("log-level"))
	}
	r, err := ab.RefRun(cmd.Context(), ro)
	return errors.Join(err, writeCSVCopy(o, rf.csvCopy, r))
}
