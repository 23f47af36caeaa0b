package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/store"
)

func init() { extraCommands = append(extraCommands, newBaseline) }

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
			src := &runSource{o: o, sf: &sf}
			defer src.Close()
			r, err := src.load(ctx, ref)
			if err != nil {
				return err
			}
			st, err := src.store(ctx)
			if err != nil {
				return err
			}
			stored, err := st.Get(ctx, r.ID)
			switch {
			case errors.Is(err, store.ErrNotFound):
				err = st.Put(ctx, r)
			case err == nil && !sameRun(stored, r):
				// Another run holds this id (an old per-second id, another host): record this
				// one under a new id rather than point the baseline at the wrong run.
				err = run.PutNew(ctx, st, r)
			}
			if err != nil {
				return err
			}
			if err := st.SetBaseline(ctx, store.Baseline{Name: args[0], RunID: r.ID, Note: note, CreatedAt: time.Now()}); err != nil {
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
			bs, err := st.ListBaselines(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(o.Stdout).Encode(bs)
			}
			if len(bs) == 0 {
				_, err := fmt.Fprintln(o.Stdout, "no baselines (set one with 'inferbench baseline set main')")
				return err
			}
			tw := tabwriter.NewWriter(o.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tRUN\tSET\tNOTE")
			for _, b := range bs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", b.Name, b.RunID, b.CreatedAt.Local().Format("2006-01-02 15:04"), b.Note)
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	show := &cobra.Command{
		Use:   "show NAME",
		Short: "Show a baseline's run",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := sf.open(ctx, o)
			if err != nil {
				return err
			}
			defer st.Close()
			b, err := st.Baseline(ctx, args[0])
			if err != nil {
				return &CodeError{Code: ExitError, Err: err}
			}
			r, err := st.Get(ctx, b.RunID)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(o.Stdout, map[string]any{"baseline": b, "run": r})
			}
			fmt.Fprintf(o.Stdout, "baseline %s: run %s, started %s, set %s", b.Name, r.ID, r.StartedAt.Local().Format("2006-01-02 15:04:05"), b.CreatedAt.Local().Format("2006-01-02 15:04"))
			if b.Note != "" {
				fmt.Fprintf(o.Stdout, " (%s)", b.Note)
			}
			fmt.Fprint(o.Stdout, "\n\n")
			return report.Table(o.Stdout, r)
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print the baseline and its run as JSON")
	cmd.AddCommand(set, list, show)
	return cmd
}

// sameRun reports whether a stored run and a run read from a file are the same run: the same
// start and the same scenarios.
func sameRun(a, b *result.Run) bool {
	if !a.StartedAt.Truncate(time.Microsecond).Equal(b.StartedAt.Truncate(time.Microsecond)) || len(a.Scenarios) != len(b.Scenarios) {
		return false
	}
	for i := range a.Scenarios {
		if a.Scenarios[i].ID() != b.Scenarios[i].ID() {
			return false
		}
	}
	return true
}
