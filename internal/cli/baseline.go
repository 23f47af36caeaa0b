package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/internal/history"
)

func newBaseline(o *IO) *cobra.Command {
	var sf storeFlags
	var note string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "baseline",
		Short: "Name runs as baselines (set, list, show)",
		Long: `baseline names a stored run so that later runs compare against it: 'inferbench run --baseline main'
or 'inferbench compare baseline:main latest'. A run given as a file or folder is recorded in the
store first.`,
		Example: `  inferbench baseline set main                 # the newest stored run
  inferbench baseline set main benchmark_results/20261122_143005
  inferbench baseline set release-1.2 20261122_143005 --note "v1.2 on A100"
  inferbench baseline list
  inferbench baseline show main`,
	}
	sf.register(cmd.PersistentFlags())
	sf.registerResults(cmd.PersistentFlags())

	set := &cobra.Command{
		Use:   "set NAME [RUN]",
		Short: "Point NAME at a run (default: latest)",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			ref := "latest"
			if len(args) == 2 {
				ref = args[1]
			}
			src := sf.runs(o)
			defer src.Close()
			r, err := src.SetBaseline(ctx, args[0], ref, note)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(o.Stdout, "baseline %s = run %s (%d scenarios)\n", args[0], r.ID, len(r.Scenarios))
			return err
		},
	}
	set.Flags().StringVar(&note, "note", "", "a note kept with the baseline")

	list := &cobra.Command{
		Use:   "list",
		Short: "List baselines",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := sf.open(cmd.Context(), o)
			if err != nil {
				return err
			}
			defer st.Close()
			return history.ShowBaselines(cmd.Context(), o.Stdout, st, formatOf(asJSON))
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	show := &cobra.Command{
		Use:   "show NAME",
		Short: "Show a baseline's run",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := sf.open(cmd.Context(), o)
			if err != nil {
				return err
			}
			defer st.Close()
			return history.ShowBaseline(cmd.Context(), o.Stdout, st, args[0], formatOf(asJSON))
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print the baseline and its run as JSON")
	cmd.AddCommand(set, list, show)
	groupFlags(cmd, flagGroup{"Where the runs are", []string{"store", "results-dir"}})
	groupFlags(set, flagGroup{"The baseline", []string{"note"}})
	groupFlags(list, flagGroup{"Output", []string{"json"}})
	groupFlags(show, flagGroup{"Output", []string{"json"}})
	return cmd
}

// formatOf is the format --json asks of the baseline commands.
func formatOf(asJSON bool) string {
	if asJSON {
		return "json"
	}
	return "text"
}
