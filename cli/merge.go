package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/merge"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/store"
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
			ctx := cmd.Context()
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
			if format != "table" && format != "json" && format != "none" {
				return usageErr("--format %q: want table, json or none", format)
			}
			if noStore && baseline != "" {
				return usageErr("--baseline needs the history store: drop --no-store")
			}
			runs, err := mergeInputs(ctx, o, &sf, args, group, since)
			if err != nil {
				return err
			}
			keep := keepSamples
			if keep == 0 {
				keep = -1 // all
			}
			m, err := merge.Runs(runs, merge.Options{AllowMissing: allowMissing, KeepSamples: keep})
			if err != nil {
				return usageErr("%v", err)
			}
			outRoot := inDir(o, outputDir)
			dir, err := result.NewRunDir(outRoot, time.Now())
			if err != nil {
				return err
			}
			m.ID = filepath.Base(dir)
			if err := result.Save(dir, m); err != nil {
				return fmt.Errorf("merged run could not be written: %w", err)
			}
			_ = result.LinkLatest(outRoot, dir)
			if format == "table" {
				fmt.Fprintf(o.Stdout, "merged %d of %d %s of group %s\n", len(m.Merged.Parts), m.Merged.Count, m.Merged.Kind, m.Merged.Group)
				for _, miss := range m.Merged.Missing {
					fmt.Fprintf(o.Stdout, "missing: %s\n", miss)
				}
			}
			// Record, judge (baseline, budgets) and render, as run does for its own runs.
			jerr := run.Judge(context.WithoutCancel(ctx), opts, dir, m)
			if failed, why := merge.Failed(m); failed {
				code := ExitError
				if errors.Is(jerr, run.ErrRegression) {
					code = ExitRegression
				}
				return &CodeError{Code: code, Err: errors.Join(fmt.Errorf("group %s is incomplete: %s (results in %s; --allow-missing accepts it)", m.Merged.Group, why, dir), jerr)}
			}
			return jerr
		},
	}
	f := cmd.Flags()
	f.StringVar(&group, "group", "", "merge this group's runs from the history store (or check that the RUNs given are of it)")
	f.DurationVar(&since, "since", 30*24*time.Hour, "with --group: look at runs started this recently")
	f.BoolVar(&allowMissing, "allow-missing", false, "pass the gate even when shards or agents are missing or did not finish (they are still named)")
	f.StringVar(&outputDir, "output-dir", "benchmark_results", "folder that receives the merged run's folder")
	f.StringVar(&format, "format", "table", "summary on stdout: table, json or none")
	f.IntVar(&keepSamples, "keep-samples", 10000, "raw samples kept per metric when agents are combined (0 keeps all)")
	f.StringVar(&baseline, "baseline", "", "compare the merged run with this baseline (exit code 3 on a regression)")
	f.BoolVar(&noStore, "no-store", false, "do not record the merged run in the history store")
	f.BoolVar(&noHTML, "no-html-report", false, "do not write report.html into the merged run's folder")
	sf.register(f)
	cf.register(f)
	return cmd
}

// mergeInputs reads the runs to merge: the folders given, or the group's runs in the store.
func mergeInputs(ctx context.Context, o *IO, sf *storeFlags, args []string, group string, since time.Duration) ([]*result.Run, error) {
	var runs []*result.Run
	if len(args) > 0 {
		paths := make([]string, len(args))
		for i, a := range args {
			paths[i] = inDir(o, a)
		}
		var err error
		if runs, err = merge.Load(paths); err != nil {
			if os.IsNotExist(err) {
				return nil, usageErr("merge: %v (want run folders or run.json files)", err)
			}
			return nil, usageErr("merge: %v", err)
		}
	}
	if len(args) > 0 {
		if group != "" {
			for _, r := range runs {
				if g := partGroup(r); g != group {
					return nil, usageErr("merge: %s is of group %q, not %q", r.ID, g, group)
				}
			}
		}
		return runs, nil
	}
	st, err := sf.open(ctx, o)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	infos, err := st.List(ctx, store.Filter{Since: time.Now().Add(-since)})
	if err != nil {
		return nil, err
	}
	// Note: the store has no index by group (a run's group is in its document), so the runs of
	// the window are read one by one; --since bounds the scan.
	for _, info := range infos {
		r, err := st.Get(ctx, info.ID)
		if err != nil {
			return nil, err
		}
		if partGroup(r) == group {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return nil, &CodeError{Code: ExitError, Err: fmt.Errorf("merge: no run of group %q in the store %s since %s", group, store.Redact(sf.location(o)), time.Now().Add(-since).Format(time.RFC3339))}
	}
	return runs, nil
}

func partGroup(r *result.Run) string {
	switch {
	case r.Shard != nil:
		return r.Shard.Group
	case r.Agent != nil:
		return r.Agent.Group
	}
	return ""
}
