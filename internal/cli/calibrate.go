package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/run"
)

func newCalibrate(o *IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "calibrate [--effect PCT] [--json] [RUN ARGS...]",
		Short: "Run scenarios twice unchanged (A/A) and recommend iterations and thresholds for this machine",
		Long: `calibrate runs the selected scenarios twice with nothing changed (every argument it does not know
goes to 'inferbench run'), then for each metric with samples reports the noise (CV), the drift
between the two runs, the measured iterations needed to detect a change of --effect percent with
95% power (estimated by resampling, seeded), and the regression threshold that keeps unchanged runs
from failing. Nothing is recorded in the history store.`,
		Example: `  inferbench calibrate --effect 5 --include 'resnet50/batch_size=8' --iterations 100
  inferbench calibrate --effect 10 --exec 'python3 infer.py' --iterations 50 --warmup 5
  inferbench calibrate --json --enable-mock --include 'llm-mock/*'`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			effect, asJSON := 5.0, false
			var runArgs []string
			for i := 0; i < len(args); i++ {
				a := args[i]
				switch {
				case a == "-h" || a == "--help":
					return cmd.Help()
				case a == "--json":
					asJSON = true
				case a == "--effect" || strings.HasPrefix(a, "--effect="):
					v, ok := strings.CutPrefix(a, "--effect=")
					if !ok {
						if i+1 >= len(args) {
							return usageErr("--effect needs a percentage, e.g. --effect 5")
						}
						i++
						v = args[i]
					}
					f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
					if err != nil || f <= 0 {
						return usageErr("--effect %q: want a positive percentage, e.g. 5", v)
					}
					effect = f
				default:
					runArgs = append(runArgs, a)
				}
			}
			_, err := run.Calibrate(cmd.Context(), effect, asJSON, o.Stdout, o.Stderr, func(ctx context.Context, i int, out string) error {
				args := append(append([]string{"run"}, runArgs...), "--no-store", "--no-html-report", "--format", "none", "--output-dir", out)
				if code := Main(ctx, args, *o); code != ExitOK && code != ExitRegression {
					return &CodeError{Code: code, Err: fmt.Errorf("calibration run %d failed", i+1)}
				}
				return nil
			})
			return err
		},
	}
	return cmd
}
