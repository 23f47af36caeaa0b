package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/result"
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
			cals, err := calibrate(cmd.Context(), effect, o.Stderr, func(ctx context.Context, i int, out string) error {
				args := append(append([]string{"run"}, runArgs...), "--no-store", "--no-html-report", "--format", "none", "--output-dir", out)
				if code := Main(ctx, args, *o); code != ExitOK && code != ExitRegression {
					return &CodeError{Code: code, Err: fmt.Errorf("calibration run %d failed", i+1)}
				}
				return nil
			})
			if err != nil {
				return err
			}
			if asJSON {
				enc := finite.NewEncoder(o.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(cals)
			}
			return calibrationText(o.Stdout, cals, effect)
		},
	}
	return cmd
}

// calibrate runs the same scenarios twice with nothing changed (A/A): runOnce makes run i (0 or
// 1) in a results folder of its own, outputDir, whose latest run calibrate reads. It returns, per
// metric with samples, the noise, the drift between the two runs, the iterations needed to detect
// a change of effect percent and the threshold that keeps unchanged runs from failing
// (calibrateRuns). Each run is announced on log.
func calibrate(ctx context.Context, effect float64, log io.Writer, runOnce func(ctx context.Context, i int, outputDir string) error) ([]calibration, error) {
	tmp, err := os.MkdirTemp("", "inferbench-calibrate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var runs [2]*result.Run
	for i := range runs {
		out := filepath.Join(tmp, strconv.Itoa(i))
		fmt.Fprintf(log, "calibrate: run %d of 2\n", i+1)
		if err := runOnce(ctx, i, out); err != nil {
			return nil, err
		}
		if runs[i], err = result.Load(filepath.Join(out, result.LatestLink)); err != nil {
			return nil, err
		}
	}
	return calibrateRuns(runs[0], runs[1], effect, 1), nil
}

// calibrationText writes the A/A calibration of `inferbench calibrate` as a table per scenario
// and metric (noise, drift, iterations to detect effect percent, the threshold to use), then the
// notes and how to use the figures.
func calibrationText(w io.Writer, cals []calibration, effect float64) error {
	if len(cals) == 0 {
		_, err := fmt.Fprintln(w, "no metric with samples to calibrate (need at least 5 measured iterations)")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "SCENARIO\tMETRIC\tN\tCV\tA/A DRIFT\tITERATIONS FOR %.3g%%\tNOISE p99\tTHRESHOLD\t\n", effect)
	for _, c := range cals {
		iters := strconv.Itoa(c.Iterations)
		if c.Iterations == 0 {
			iters = "> 1000"
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%d+%d\t%.1f%%\t%+.1f%% (p=%.2f)\t%s\t%.1f%%\t%.0f%%\t\n", c.Benchmark, c.Scenario, c.Metric, c.N1, c.N2, 100*c.CV, c.DriftPct, c.DriftP, iters, c.NoisePct, c.ThresholdPct)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range cals {
		for _, n := range c.Notes {
			fmt.Fprintf(w, "note %s/%s %s: %s\n", c.Benchmark, c.Scenario, c.Metric, n)
		}
	}
	_, err := fmt.Fprintf(w, "\nuse: --measurement-iterations ITERATIONS when running, and --threshold BENCHMARK:METRIC=THRESHOLD when comparing\n")
	return err
}
