package report

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/inferbench/inferbench/compare"
)

// CalibrationText writes the A/A calibration of `inferbench calibrate` as a table per scenario
// and metric (noise, drift, iterations to detect effect percent, the threshold to use), then the
// notes and how to use the figures.
func CalibrationText(w io.Writer, cals []compare.Calibration, effect float64) error {
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
