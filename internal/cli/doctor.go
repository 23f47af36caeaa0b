package cli

import (
	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/internal/cli/doctor"
	"github.com/inferbench/inferbench/internal/kind/worker"
)

func newDoctor(o *IO) *cobra.Command {
	var asJSON bool
	var python string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Say which Python interpreter and framework versions each worker adapter will use",
		Long: `doctor asks the interpreter the workers will run under ($INFERBENCH_PYTHON, else the active
virtual environment's, else python3 on PATH, else /usr/bin/python3) to import every module each
adapter needs, and prints the versions, devices and providers it found, or why a module does not
import. A definition's own "python:" key still wins for that definition.`,
		Example: `  inferbench doctor
  inferbench doctor --python .venv/bin/python --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			py := pyenv.Find(env(o).Lookup)
			if python != "" {
				py = pyenv.Interpreter{Path: python, Source: "flag"}
			}
			r := doctor.Check(cmd.Context(), doctor.Options{Python: py, Required: worker.Adapters, Optional: worker.Optional})
			if asJSON {
				return writeJSON(o.Stdout, r)
			}
			return r.WriteText(o.Stdout)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&python, "python", "", "ask this interpreter instead of the one workers would use")
	groupFlags(cmd, flagGroup{"What to check", []string{"python"}}, flagGroup{"Output", []string{"json"}})
	return cmd
}
