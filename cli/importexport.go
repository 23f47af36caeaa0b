package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
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

The format is detected from the content unless --format says otherwise. The run id printed can
be given to compare and baseline set.`,
		Example: `  go test -bench . -count 10 ./... | tee bench.txt && inferbench import bench.txt
  pytest --benchmark-json=bench.json --benchmark-save-data && inferbench import bench.json
  hyperfine --export-json hf.json 'python3 infer.py' && inferbench import hf.json --benchmark infer
  inferbench compare baseline:main "$(inferbench import new.txt)"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := sf.open(cmd.Context(), o)
			if err != nil {
				return err
			}
			defer st.Close()
			started := time.Now()
			if at != "" {
				if started, err = time.Parse(time.RFC3339, at); err != nil {
					return usageErr("--time %q: want RFC 3339, e.g. 2026-03-01T12:00:00Z", at)
				}
			}
			for i, file := range args {
				data, err := os.ReadFile(inDir(o, file))
				if err != nil {
					return err
				}
				base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
				// A generated id is unique (result.NewID): two files of the same name imported in
				// the same second are two runs.
				runID := result.NewID(started) + "_" + base
				if id != "" {
					runID = id
					if len(args) > 1 {
						runID = fmt.Sprintf("%s_%d", id, i+1)
					}
				}
				b := bench
				if b == "" {
					b = base
				}
				r, err := result.Import(data, file, format, runID, b, started)
				if err != nil {
					return &CodeError{Code: ExitUsage, Err: err}
				}
				given := r.ID
				if id != "" && r.ID == runID {
					err = st.Put(cmd.Context(), r) // an id asked for: taken is an error
				} else {
					err = run.PutNew(cmd.Context(), st, r) // taken: a new id, never a replaced run
				}
				if err != nil {
					return err
				}
				fmt.Fprintln(o.Stdout, r.ID)
				note := ""
				if r.ID != given {
					note = fmt.Sprintf(" (id %s was taken in the store)", given)
				}
				if r.Partial {
					note += " (partial: the run did not finish)"
				}
				fmt.Fprintf(o.Stderr, "imported %s: run %s, %d scenarios%s\n", file, r.ID, len(r.Scenarios), note)
			}
			return nil
		},
	}
	f := cmd.Flags()
	sf.register(f)
	f.StringVar(&format, "format", "auto", "auto, gobench, pytest or hyperfine")
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
			r, err := src.Load(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			w := bufio.NewWriter(o.Stdout)
			switch format {
			case "gobench":
				err = result.WriteGoBench(w, r)
			case "github-action-benchmark":
				dir := result.Lower
				if bigger {
					dir = result.Higher
				}
				err = writeJSON(w, result.GitHubActionBenchmark(r, dir))
			default:
				return usageErr("--format %q: want gobench or github-action-benchmark", format)
			}
			if err != nil {
				return err
			}
			return w.Flush()
		},
	}
	f := cmd.Flags()
	sf.register(f)
	sf.registerResults(f)
	f.StringVar(&format, "format", "gobench", "gobench or github-action-benchmark")
	f.BoolVar(&bigger, "bigger", false, "github-action-benchmark: the higher-is-better metrics (customBiggerIsBetter)")
	return cmd
}
