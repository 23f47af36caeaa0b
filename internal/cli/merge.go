package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/internal/cli/merge"
	"github.com/inferbench/inferbench/run"
)

func newMerge(o *IO) *cobra.Command {
	var (
		group, outputDir, format, baseline string
		since                              time.Duration
		allowMissing, noStore, noHTML      bool
		keepSamples                        int
		sf                                 storeFlags
		cf                                 compareFlags
	)
	cmd := &cobra.Command{
		Use:   "merge [RUN...]",
		Short: "Merge the shards or agents of a scale-out group into one run",
		Long: `merge makes one run out of the runs of a group: the shards of a suite (run --shard i/n), whose
scenarios it gathers, or the agents that loaded one server (run --agents N --agent i), whose scenarios
it combines exactly (histogram buckets added, rates over the union of the windows) with each agent's
skew. RUN is a run folder or run.json; with --group and no RUN, the group's runs are read from the
history store. The merged run is written like any run (run.json in a folder under --output-dir) and
recorded in the store; compare, report, budgets and --baseline work on it as on any run.

Exit code: 1 when a shard or agent is missing or did not finish (unless --allow-missing), or a
scenario failed; 3 on a regression or an exceeded budget; 0 otherwise. See docs/scale-out.md.`,
		Example: `  inferbench merge --group nightly-42 --store postgres://bench@db/inferbench
  inferbench merge shards/*/benchmark_results/latest --baseline main
  inferbench merge agent-*/latest --format json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && group == "" {
				return usageErr("merge: give run folders, or --group NAME to read the group's runs from the store")
			}
			opts := run.Options{
				OutputDir: outputDir, Store: sf.url, NoStore: noStore, Baseline: baseline, NoHTMLReport: noHTML,
				Format: format, Stdout: o.Stdout, Stderr: o.Stderr, Dir: o.Dir, Env: o.Env, Args: o.Args, Version: Version,
			}
			var err error
			if opts.Compare, err = cf.config(o, cmd.Flags()); err != nil {
				return err
			}
			_, _, err = merge.Group(cmd.Context(), opts, merge.GroupOptions{Paths: args, Group: group, Since: since, AllowMissing: allowMissing, KeepSamples: keptSamples(keepSamples)})
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&group, "group", "", "merge this group's runs from the history store (or check that the RUNs given are of it)")
	f.DurationVar(&since, "since", 30*24*time.Hour, "with --group: look at runs started this recently")
	f.BoolVar(&allowMissing, "allow-missing", false, "pass the gate even when shards or agents are missing or did not finish (they are still named)")
	f.StringVar(&outputDir, "output-dir", "benchmark_results", "folder that receives the merged run's folder")
	formatFlag(f, &format, "text", "the summary on stdout (table, its old name, is text)", "text", "json", "none")
	f.IntVar(&keepSamples, "keep-samples", 10000, "raw samples kept per metric when agents are combined (0 keeps all)")
	f.StringVar(&baseline, "baseline", "", "compare the merged run with this baseline (exit code 3 on a regression)")
	f.BoolVar(&noStore, "no-store", false, "do not record the merged run in the history store")
	f.BoolVar(&noHTML, "no-html-report", false, "do not write report.html into the merged run's folder")
	sf.register(f)
	cf.register(f)
	groupFlags(cmd,
		flagGroup{"What to merge", []string{"group", "since", "allow-missing", "keep-samples"}},
		flagGroup{"Comparison and gate", []string{"baseline", "threshold", "thresholds-file", "budget-file", "alpha", "gate", "uncorrected", "strict"}},
		flagGroup{"Output", []string{"output-dir", "format", "no-html-report"}},
		flagGroup{"Store", []string{"store", "no-store"}})
	needFlags(cmd, need{[]string{"since"}, []string{"group"}})
	return cmd
}
