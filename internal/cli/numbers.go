package cli

import (
	"errors"
	"math"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// checkNumbers refuses, for every flag the command line set, a number that no flag can mean: NaN
// or an infinity in a float flag (--alpha NaN, --otlp-span-rate Inf: each range check below would
// pass it, since every comparison with NaN is false) and a negative duration (--timeout -1s,
// --min-time -5s). Each flag's own range is checked where its value is used.
func checkNumbers(c *cobra.Command) error {
	var errs []error
	c.Flags().Visit(func(f *pflag.Flag) {
		var bad []float64
		switch f.Value.Type() {
		case "float64", "float32":
			if v, err := c.Flags().GetFloat64(f.Name); err == nil && !isFinite(v) {
				bad = append(bad, v)
			}
		case "float64Slice":
			vs, _ := c.Flags().GetFloat64Slice(f.Name)
			for _, v := range vs {
				if !isFinite(v) {
					bad = append(bad, v)
				}
			}
		case "duration":
			if d, err := c.Flags().GetDuration(f.Name); err == nil && d < 0 {
				errs = append(errs, usageErr("--%s %v: a duration cannot be negative", f.Name, d))
			}
		}
		for _, v := range bad {
			errs = append(errs, usageErr("--%s %v: want a finite number", f.Name, v))
		}
	})
	return errors.Join(errs...)
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
