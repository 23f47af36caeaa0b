package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/run"
)

func newList(o *IO) *cobra.Command {
	var sel selection
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [PATH...]",
		Short: "List discovered benchmarks and scenarios, and why any would be skipped",
		Example: `  inferbench list
  inferbench list --category performance --json
  inferbench list models/resnet50`,
		RunE: func(cmd *cobra.Command, args []string) error {
			noteUnread(o, args)
			rows, n, err := run.List(sel.selection(o, args), env(o))
			switch {
			case err != nil:
				return err
			case asJSON:
				return writeJSON(o.Stdout, rows)
			}
			return writeList(o.Stdout, rows, n)
		},
	}
	sel.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	groupFlags(cmd, flagGroup{"What to list", selectionFlags}, flagGroup{"Output", []string{"json"}})
	return cmd
}

// writeList writes a listing (run.List) as a table.
func writeList(w io.Writer, rows []run.ListRow, benchmarks int) error {
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BENCHMARK\tSCENARIO\tCATEGORY\tMODEL\tSUBJECT\tSOURCE\tSKIPPED")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Benchmark, r.Scenario, dash(r.Category), dash(r.Model), r.Subject, r.Source, dash(r.Skip))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d benchmarks, %d scenarios\n", benchmarks, len(rows))
	return err
}
