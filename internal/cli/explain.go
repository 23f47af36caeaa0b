package cli

import (
	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/internal/cli/recorded"
	"github.com/inferbench/inferbench/internal/explain"
)

type explainCmdFlags struct {
	runs   twoRunFlags
	format string
	output string
	all    bool
	alpha  float64
}

func newExplain(o *IO) *cobra.Command {
	var f explainCmdFlags
	cmd := &cobra.Command{
		Use:   "explain OLD NEW",
		Short: "Say why a scenario got slower: the functions and operators whose cost per call changed",
		Long: `explain compares two runs as compare does and, for each regressed scenario, reads the profiles
both runs took of it (run --profile): Go CPU profiles, cProfile per Python function,
torch.profiler per operator and input shapes, callgrind per function (instruction mode). Each
run profiles its calls in independent chunks; a function or operator is named when its cost per
call changed significantly across the chunks (Welch's t-test, Benjamini-Hochberg over the
entries at --fdr) and by at least 3% of its own cost, with old → new cost per call (self and
inclusive), its share of the scenario's change and its q-value. Entries of one run only are
listed as added or removed. One line per scenario says how much the named entries explain:

  latency_ms +12.1%; explained 87%: ` + "`aten::addmm`" + ` [8×64, 64×128] +0.41 ms per call (64%), ...

With no regression, every scenario of both runs is explained (--all-scenarios always does).
compare and run --baseline print the same section below a failed gate; report.html draws the
differential flame graph. OLD and NEW are each a run folder, a run.json, a run id (in
--results-dir, then in the store), "latest" or "baseline:NAME"; the profiles are files of the run
folders, so a run only in the store is not explained (name its folder). docs/explain.md.

Exit code: 0 explained (whatever the change), 1 an error (a profile the runs list that cannot be
read: outside its run folder, not a regular file, over its size limit, corrupt; the others are
explained first), 2 usage.`,
		Example: `  inferbench explain baseline:main latest
  inferbench explain benchmark_results/20261122_143005 benchmark_results/latest --format markdown
  inferbench explain old/run.json new/run.json --all-scenarios --format json -o explain.json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, cfg, err := f.runs.open(o, cmd.Flags())
			if err != nil {
				return err
			}
			defer src.Close()
			_, err = src.Explain(cmd.Context(), args[0], args[1], recorded.ExplainOptions{
				Config: cfg, All: f.all, Explain: explain.Options{Alpha: f.alpha},
				Format: f.format, Output: f.output, Stdout: o.Stdout,
			})
			return err
		},
	}
	fl := cmd.Flags()
	f.runs.register(fl)
	formatFlag(fl, &f.format, "text", "", "text", "markdown", "json")
	fl.StringVarP(&f.output, "output", "o", "-", "write the explanation here (- for stdout)")
	fl.BoolVar(&f.all, "all-scenarios", false, "explain every scenario of both runs, not only the regressed ones")
	fl.Float64Var(&f.alpha, "fdr", 0.01, "false discovery rate over a scenario's functions and operators")
	groupFlags(cmd,
		flagGroup{"Where the runs are", []string{"results-dir", "store"}},
		flagGroup{"Comparison and gate", []string{"threshold", "thresholds-file", "budget-file", "alpha", "gate", "uncorrected", "strict"}},
		flagGroup{"The explanation", []string{"all-scenarios", "fdr"}},
		flagGroup{"Output", []string{"format", "output"}})
	return cmd
}
