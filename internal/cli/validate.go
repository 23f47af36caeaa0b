package cli

import (
	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/run"
)

func newValidate(o *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "validate [PATH...]",
		Short: "Check benchmark definitions without running them",
		Long:  "validate parses every definition strictly and reports every problem with file:line:col; it exits 2 when there is one.",
		Example: `  inferbench validate
  inferbench validate benches/llm.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			noteUnread(o, args)
			return run.Validate(run.Selection{Paths: args, Funcs: o.Funcs}, env(o), o.Stdout)
		},
	}
}
