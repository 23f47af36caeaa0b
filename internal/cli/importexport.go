package cli

import (
	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/internal/runs"
)

func newImport(o *IO) *cobra.Command {
	var sf storeFlags
	var format, id, bench, at string
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Record results of other tools in the history store (go test -bench, pytest-benchmark, hyperfine)",
		Long: `import reads benchmark results written by other tools and records each file as a run in the history
store, so that compare, history and baselines work on them:

  gobench    'go test -bench' output (the Go benchmark format; each line is a sample)
  pytest     pytest-benchmark JSON (--benchmark-json; raw rounds with --benchmark-save-data)
  hyperfine  hyperfine JSON (--export-json)
  inferbench a run.json or run folder of inferbench's own (a killed run: marked partial, with the
             scenarios of its journal)

The format is detected from the content unless --format says otherwise. The run id printed can
be given to compare and baseline set.`,
		Example: `  go test -bench . -count 10 ./... | tee bench.txt && inferbench import bench.txt
  pytest --benchmark-json=bench.json --benchmark-save-data && inferbench import bench.json
  hyperfine --export-json hf.json 'python3 infer.py' && inferbench import hf.json --benchmark infer
  inferbench compare baseline:main "$(inferbench import new.txt)"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := runs.Import(cmd.Context(), runs.ImportOptions{Files: args, Format: format, ID: id, Benchmark: bench, Time: at,
				Store: sf.url, Env: env(o), Stdout: o.Stdout, Stderr: o.Stderr})
			return err
		},
	}
	f := cmd.Flags()
	sf.register(f)
	f.StringVar(&format, "format", "auto", "auto, gobench, pytest, hyperfine or inferbench")
	f.StringVar(&id, "id", "", "run id (default: the time and the file name)")
	f.StringVar(&bench, "benchmark", "", "hyperfine: the benchmark name (default: the file name)")
	f.StringVar(&at, "time", "", "when the results were taken, RFC 3339 (default: now; pytest files carry their own)")
	return cmd
}

func newExport(o *IO) *cobra.Command {
	var sf storeFlags
	var format string
	var bigger bool
	cmd := &cobra.Command{
		Use:   "export RUN",
		Short: "Write a run in another tool's format (Go benchmark format for benchstat, github-action-benchmark JSON)",
		Long: `export writes one run (a run.json, a run folder, a run id, latest or baseline:NAME) to stdout:

  gobench                  the Go benchmark format, one line per sample: benchstat compares two exports
  github-action-benchmark  JSON for benchmark-action/github-action-benchmark's customSmallerIsBetter
                           tool (lower-is-better metrics; --bigger for customBiggerIsBetter)`,
		Example: `  inferbench export baseline:main > old.txt && inferbench export latest > new.txt && benchstat old.txt new.txt
  inferbench export latest --format github-action-benchmark > smaller.json
  inferbench export latest --format github-action-benchmark --bigger > bigger.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src := sf.runs(o)
			defer src.Close()
			return src.Export(cmd.Context(), args[0], runs.ExportOptions{Format: format, BiggerIsBetter: bigger}, o.Stdout)
		},
	}
	f := cmd.Flags()
	sf.register(f)
	sf.registerResults(f)
	f.StringVar(&format, "format", "gobench", "gobench or github-action-benchmark")
	f.BoolVar(&bigger, "bigger", false, "github-action-benchmark: the higher-is-better metrics (customBiggerIsBetter)")
	return cmd
}
