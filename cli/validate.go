package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newValidate(o *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "validate [PATH...]",
		Short: "Check benchmark definitions without running them",
		Long:  "validate parses every definition strictly and reports every problem with file:line:col; it exits 2 when there is one.",
		Example: `  inferbench validate
  inferbench validate benches/llm.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			benches, err := loadBenchmarks(o, args)
			if err != nil {
				return err
			}
			n := 0
			for _, b := range benches {
				n += len(b.Expand(nil))
			}
			_, err = fmt.Fprintf(o.Stdout, "ok: %d benchmarks, %d scenarios\n", len(benches), n)
			return err
		},
	}
}
