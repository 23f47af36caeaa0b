package cli

import (
	"fmt"
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
			benches, err := loadBenchmarks(o, args)
			if err != nil {
				return err
			}
			scs, err := run.Expand(sel.selection(o, args), benches)
			if err != nil {
				return codeOf(err)
			}
			check := run.Checker(sel.selection(o, args), env(o))
			type row struct {
				Benchmark string         `json:"benchmark"`
				Scenario  string         `json:"scenario"`
				Category  string         `json:"category,omitempty"`
				Model     string         `json:"model,omitempty"`
				Subject   string         `json:"subject"`
				Source    string         `json:"source"`
				Params    map[string]any `json:"params,omitempty"`
				Skip      string         `json:"skip,omitempty"`
			}
			rows := make([]row, 0, len(scs))
			for _, sc := range scs {
				b := sc.Benchmark
				rows = append(rows, row{b.Name, sc.Name, b.Category, b.Model, b.Kind, b.Source(), sc.Params, check.Check(sc)})
			}
			if asJSON {
				return writeJSON(o.Stdout, rows)
			}
			tw := tabwriter.NewWriter(o.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "BENCHMARK\tSCENARIO\tCATEGORY\tMODEL\tSUBJECT\tSOURCE\tSKIPPED")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Benchmark, r.Scenario, dash(r.Category), dash(r.Model), r.Subject, r.Source, dash(r.Skip))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(o.Stdout, "\n%d benchmarks, %d scenarios\n", len(benches), len(rows))
			return nil
		},
	}
	sel.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
