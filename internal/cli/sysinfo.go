package cli

import (
	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/internal/stage/sample"
)

func newSysinfo(o *IO) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "sysinfo",
		Short: "Print the environment fingerprint recorded with every run",
		Example: `  inferbench sysinfo
  inferbench sysinfo --json | jq .gpus`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			e := env(o)
			info := sample.Sysinfo(cmd.Context(), e.Dir, e.Python(), Version)
			if asJSON {
				return writeJSON(o.Stdout, info)
			}
			return info.WriteText(o.Stdout)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	groupFlags(cmd, flagGroup{"Output", []string{"json"}})
	return cmd
}
