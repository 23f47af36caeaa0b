package cli

import (
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
			rows, n, err := run.List(sel.selection(o, args), env(o))
			switch {
			case err != nil:
				return err
			case asJSON:
				return writeJSON(o.Stdout, rows)
			}
			return run.WriteList(o.Stdout, rows, n)
		},
	}
	sel.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
