package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/cli/recorded"
	"github.com/inferbench/inferbench/internal/tracker"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
)

func newImport(o *IO) *cobra.Command {
	var sf storeFlags
	var format, id, bench, at, group string
	var secretParams []string
	agents, agentIndex := 0, -1
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Record results of other tools in the history store (go test -bench, pytest-benchmark, hyperfine, vLLM, AIPerf, guidellm, llm-d)",
		Long: `import reads benchmark results written by other tools and records each file as a run in the history
store, so that compare, history and baselines work on them:

  gobench    'go test -bench' output (the Go benchmark format; each line is a sample)
  pytest     pytest-benchmark JSON (--benchmark-json; raw rounds with --benchmark-save-data)
  hyperfine  hyperfine JSON (--export-json)
  inferbench a run.json or run folder of inferbench's own (a killed run: marked partial, with the
             scenarios of its journal)
  vllm       vllm bench serve --save-result JSON (per request with --save-detailed; --append-result:
             a scenario a line)
  aiperf     AIPerf's profile_export_aiperf.json or profile_export.jsonl (the other one beside it is
             read too: aggregates and per-request records)
  guidellm   guidellm's benchmarks.json (--output kind=json): a scenario per benchmark
  llm-d      an llm-d benchmark report v0.2 (YAML or JSON): aggregates only

Serving results that keep each request's timestamps are derived by inferbench's own definitions
(docs/metrics.md); the tool's own aggregates are kept beside them, and the run's environment says
where it came from (docs/import.md).

The format is detected from the content unless --format says otherwise. The run id printed can
be given to compare and baseline set.`,
		Example: `  go test -bench . -count 10 ./... | tee bench.txt && inferbench import bench.txt
  pytest --benchmark-json=bench.json --benchmark-save-data && inferbench import bench.json
  hyperfine --export-json hf.json 'python3 infer.py' && inferbench import hf.json --benchmark infer
  inferbench compare baseline:main "$(inferbench import new.txt)"
  vllm bench serve --save-result --save-detailed --result-filename v.json ... && inferbench import v.json
  inferbench import artifacts/profile_export.jsonl && inferbench report latest --report-as aiperf`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			agent, err := importAgent(group, agents, agentIndex, len(args))
			if err != nil {
				return err
			}
			_, err = recorded.Import(cmd.Context(), recorded.ImportOptions{Files: args, Format: format, ID: id, Benchmark: bench, Time: at,
				SecretParams: secretParams, Store: sf.url, Env: env(o), Stdout: o.Stdout, Stderr: o.Stderr, Agent: agent})
			return err
		},
	}
	f := cmd.Flags()
	sf.register(f)
	f.StringVar(&group, "group", "", "with --agents: the group the agents' runs share, for 'inferbench merge --group'")
	f.IntVar(&agents, "agents", 0, "the files are the results of this many client machines that loaded one server together: each run is an agent of --group, merged exactly by 'inferbench merge --group'")
	f.IntVar(&agentIndex, "agent", -1, "with --agents: this file's agent index (default: each file's position among the files, as many as --agents)")
	f.StringVar(&format, "format", "auto", "the other tool's format the files are in (not an output format of inferbench's): auto, gobench, pytest, hyperfine, inferbench, vllm, aiperf, guidellm or llm-d")
	f.StringVar(&id, "id", "", "run id (default: the time and the file name)")
	f.StringVar(&bench, "benchmark", "", "with --format hyperfine: the benchmark name (default: the file name)")
	f.StringArrayVar(&secretParams, "secret-param", nil, "a parameter whose values are secrets (repeatable): masked whole; the others are kept as the file has them")
	f.StringVar(&at, "time", "", "when the results were taken, RFC 3339 (default: now; pytest files carry their own)")
	groupFlags(cmd,
		flagGroup{"The files", []string{"format", "benchmark", "id", "time", "secret-param"}},
		flagGroup{"Agents of one load (merge --group)", []string{"agents", "agent", "group"}},
		flagGroup{"Store", []string{"store"}})
	needFlags(cmd, need{[]string{"agent", "group"}, []string{"agents"}})
	return cmd
}

// importAgent is import's --group, --agents and --agent: nil without --agents.
func importAgent(group string, agents, index, files int) (*result.AgentInfo, error) {
	switch {
	case agents == 0 && index < 0 && group == "":
		return nil, nil
	case agents <= 0:
		return nil, exit.UsageError(fmt.Errorf("--agent and --group need --agents N (the client machines that loaded the server together)"))
	case group == "":
		return nil, exit.UsageError(fmt.Errorf("--agents %d: give the --group the agents' runs share", agents))
	case index >= agents:
		return nil, exit.UsageError(fmt.Errorf("--agent %d: want 0 to %d (--agents %d)", index, agents-1, agents))
	case index >= 0 && files != 1:
		return nil, exit.UsageError(fmt.Errorf("--agent %d names one file's index: give one file, or leave --agent out to number the %d files", index, files))
	case index < 0 && files != agents:
		return nil, exit.UsageError(fmt.Errorf("--agents %d without --agent: give one file per agent (%d given), or --agent I for one file", agents, files))
	}
	return &result.AgentInfo{Group: group, Index: index, Count: agents}, nil
}

func newExport(o *IO) *cobra.Command {
	var sf storeFlags
	var tf trackerFlags
	var format string
	var bigger bool
	cmd := &cobra.Command{
		Use:   "export RUN",
		Short: "Write a run in another tool's format (benchstat, github-action-benchmark), or send it to MLflow or W&B",
		Long: `export writes one run (a run.json, a run folder, a run id, latest or baseline:NAME) to stdout:

  gobench                  the Go benchmark format, one line per sample: benchstat compares two exports
  github-action-benchmark  JSON for benchmark-action/github-action-benchmark's customSmallerIsBetter
                           tool (lower-is-better metrics; --bigger for customBiggerIsBetter)

or sends it to an experiment tracker and prints what it created (docs/trackers.md):

  mlflow  an MLflow run for the inferbench run (tags; run.json, report.html, summary.csv as
          artifacts) and under it a run per scenario (params, metrics, time slices as steps),
          over MLflow's REST API: --tracking-uri or $MLFLOW_TRACKING_URI, --experiment or
          $MLFLOW_EXPERIMENT_NAME (default inferbench), $MLFLOW_TRACKING_TOKEN or
          $MLFLOW_TRACKING_USERNAME and $MLFLOW_TRACKING_PASSWORD
  wandb   a W&B run per scenario grouped by the run id, through the wandb Python package of the
          workers' interpreter ($INFERBENCH_PYTHON, the active venv, python3): --project or
          $WANDB_PROJECT (default inferbench), --entity or $WANDB_ENTITY; $WANDB_MODE,
          $WANDB_DIR and $WANDB_API_KEY as wandb reads them`,
		Example: `  inferbench export baseline:main > old.txt && inferbench export latest > new.txt && benchstat old.txt new.txt
  inferbench export latest --format github-action-benchmark > smaller.json
  inferbench export latest --format github-action-benchmark --bigger > bigger.json
  inferbench export latest --format mlflow --tracking-uri http://127.0.0.1:5000 --experiment serving
  WANDB_MODE=offline inferbench export benchmark_results/20261126-101500 --format wandb --project llm`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src := sf.runs(o)
			defer src.Close()
			if format != tracker.MLflow && format != tracker.Wandb {
				return src.Export(cmd.Context(), args[0], recorded.ExportOptions{Format: format, BiggerIsBetter: bigger}, o.Stdout)
			}
			r, dir, err := src.LoadFolder(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			got, err := tf.export(cmd.Context(), o, format, tracker.From(r, tracker.Options{Dir: dir}))
			if got != nil {
				got.Write(o.Stdout)
			}
			return err
		},
	}
	f := cmd.Flags()
	sf.register(f)
	sf.registerResults(f)
	tf.register(f, "--format")
	f.StringVar(&format, "format", "gobench", "the other tool's format the run is written in (not an output format of inferbench's): gobench, github-action-benchmark, mlflow or wandb")
	f.BoolVar(&bigger, "bigger", false, "with --format github-action-benchmark: the higher-is-better metrics (customBiggerIsBetter)")
	groupFlags(cmd,
		flagGroup{"The other tool", []string{"format", "bigger"}},
		flagGroup{"MLflow and W&B", []string{"tracking-uri", "experiment", "project", "entity", "export-timeout"}},
		flagGroup{"Where the run is", []string{"results-dir", "store"}})
	return cmd
}

// trackerFlags say where export and run --export send a run.
type trackerFlags struct {
	trackingURI, experiment string // MLflow
	project, entity         string // W&B
	timeout                 time.Duration
}

// register adds the trackers' flags; by is the flag that names the tracker (--export of run,
// --format of export), which their help names.
func (tf *trackerFlags) register(f *pflag.FlagSet, by string) {
	f.StringVar(&tf.trackingURI, "tracking-uri", "", "with "+by+" mlflow: the tracking server (default $MLFLOW_TRACKING_URI)")
	f.StringVar(&tf.experiment, "experiment", "", "with "+by+" mlflow: the experiment (default $MLFLOW_EXPERIMENT_NAME, else "+tracker.DefaultExperiment+")")
	f.StringVar(&tf.project, "project", "", "with "+by+" wandb: the project (default $WANDB_PROJECT, else inferbench)")
	f.StringVar(&tf.entity, "entity", "", "with "+by+" wandb: the entity, a user or team (default $WANDB_ENTITY)")
	f.DurationVar(&tf.timeout, "export-timeout", 0, "with "+by+": the trackers' deadline: each MLflow request, the whole W&B export (default $"+tracker.TimeoutEnv+", else "+tracker.DefaultTimeout.String()+" a request and 10m for W&B)")
}

// deadline is --export-timeout, else $INFERBENCH_EXPORT_TIMEOUT (0 when neither says).
func (tf *trackerFlags) deadline(o *IO) (time.Duration, error) {
	if tf.timeout < 0 {
		return 0, usageErr("--export-timeout %v: want a positive duration such as 10s", tf.timeout)
	}
	if tf.timeout > 0 {
		return tf.timeout, nil
	}
	d, _, err := tracker.Timeout(o.LookupEnv)
	if err != nil {
		return 0, usageErr("%v", err)
	}
	return d, nil
}

// timeoutHint is the line a warning adds when a tracker's deadline passed: what it was and how to
// lengthen it.
func (tf *trackerFlags) timeoutHint(o *IO, err error) string {
	if !tracker.TimedOut(err) {
		return ""
	}
	d, _ := tf.deadline(o)
	if d == 0 {
		d = tracker.DefaultTimeout
	}
	return fmt.Sprintf("  the tracker did not answer within its deadline (%v): lengthen it with --export-timeout or $%s\n", d, tracker.TimeoutEnv)
}

// export sends the payload to the tracker named by format (mlflow or wandb).
func (tf *trackerFlags) export(ctx context.Context, o *IO, format string, p *tracker.Payload) (*tracker.Exported, error) {
	d, err := tf.deadline(o)
	if err != nil {
		return nil, err
	}
	switch format {
	case tracker.MLflow:
		return tracker.ExportMLflow(ctx, p, tracker.MLflowOptions{TrackingURI: tf.trackingURI, Experiment: tf.experiment, Env: o.Env, Timeout: d})
	case tracker.Wandb:
		return tracker.ExportWandb(ctx, p, tracker.WandbOptions{Project: tf.project, Entity: tf.entity, Env: o.Env, Dir: o.Dir, Stderr: o.Stderr, Timeout: d})
	}
	return nil, usageErr("--format %q: want gobench, github-action-benchmark, mlflow or wandb", format)
}

// runExport is run's --export: after the run's results are written, it sends the run to each
// tracker named. A tracker's failure is a warning naming the command that retries it: it never
// changes the run's exit status.
type runExport struct {
	trackerFlags
	to      []string // mlflow, wandb
	o       *IO
	dir     string
	verdict string
}

func (e *runExport) register(f *pflag.FlagSet) {
	f.StringSliceVar(&e.to, "export", nil, "after the run, send it to these experiment trackers: mlflow, wandb (repeatable or a comma list; docs/trackers.md)")
	e.trackerFlags.register(f, "--export")
}

// observer returns the run observer that exports, or nil when --export names nothing; a
// tracker it does not know is a usage error.
func (e *runExport) observer(o *IO) (run.Observer, error) {
	if len(e.to) == 0 {
		return nil, nil
	}
	for i, t := range e.to {
		t = strings.TrimSpace(t)
		e.to[i] = t
		if t != tracker.MLflow && t != tracker.Wandb {
			return nil, usageErr("--export %q: want mlflow or wandb", t)
		}
	}
	if _, err := e.deadline(o); err != nil {
		return nil, err
	}
	e.o = o
	return e, nil
}

func (e *runExport) RunStarted(_ context.Context, dir string) error {
	e.dir = dir
	return nil
}

func (e *runExport) RunJudged(v *run.Verdict) {
	if v != nil && v.Compare != nil {
		e.verdict = map[bool]string{true: "fail", false: "pass"}[v.Failed()]
	}
}

func (e *runExport) RunFinished(ctx context.Context, r *result.Run) error {
	if r == nil {
		return nil
	}
	p := tracker.From(r, tracker.Options{Dir: e.dir, Verdict: e.verdict})
	for _, t := range slices.Compact(slices.Clone(e.to)) {
		got, err := e.export(ctx, e.o, t, p)
		if got != nil {
			got.Write(e.o.Stderr)
		}
		if err != nil {
			fmt.Fprintf(e.o.Stderr, "warning: %s export failed, the results are kept in %s: %v\n%s  retry: inferbench export %s --format %s\n",
				t, e.dir, err, e.timeoutHint(e.o, err), e.dir, t)
		}
	}
	return nil // an export's failure never fails the run
}

var (
	_ run.RunStarter  = (*runExport)(nil)
	_ run.RunJudger   = (*runExport)(nil)
	_ run.RunFinisher = (*runExport)(nil)
)
