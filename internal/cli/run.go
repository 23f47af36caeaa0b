package cli

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/inferbench/inferbench/alert"
	"github.com/inferbench/inferbench/internal/base/atomicfile"
	"github.com/inferbench/inferbench/internal/base/callgrind"
	"github.com/inferbench/inferbench/internal/cli/progress"
	"github.com/inferbench/inferbench/internal/cli/web"
	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/internal/monitor"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/suite"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// runFlags are `inferbench run`'s flags; options turns them into run.Options.
type runFlags struct {
	csvCopy     string // --csv: a copy of summary.csv under a name of the user's
	sel         selection
	quick       quickFlags
	warmup      int
	iterations  int
	minTime     time.Duration
	maxTime     time.Duration
	timeout     time.Duration
	outputDir   string
	format      string
	logLevel    string
	dryRun      bool
	keepSamples int
	measure     string
	secretParam []string // --secret-param: parameter names whose values are secrets

	monitor      run.Monitor
	noRequestLog bool
	noHTML       bool
	sf           storeFlags
	cf           compareFlags
	baseline     string
	baselineRef  string // --baseline-ref (baseref.go)
	noStore      bool
	alerts       alertFlags
	live         web.LiveRun
	scaleout     scaleoutFlags // --shard, --agents (scaleout.go)
	otlp         otlpFlags     // --otlp-endpoint, --otlp-span-rate (tracing.go)
	export       runExport     // --export mlflow,wandb and the trackers' flags (importexport.go)
}

func newRun(o *IO) *cobra.Command {
	var rf runFlags
	profile := new(int)
	cmd := &cobra.Command{
		Use:   "run [PATH...]",
		Short: "Run benchmarks and write a results folder",
		Long: `run discovers definitions (YAML under benches/ directories below PATH, default .), runs every
selected scenario, prints a summary and writes run.json, summary.csv and run.log into a timestamped
folder under --output-dir. Exit code: 0 ok, 1 a scenario failed or the run was interrupted, 2 bad
flags or definitions, 3 a regression or exceeded budget.

The first Ctrl-C stops after the current iteration and keeps what was measured (run.json marked
"partial": true); a second exits at once.`,
		Example: `  inferbench run
  inferbench run --enable-mock --include 'llm-mock/*' --measurement-iterations 50
  inferbench run --exec 'python3 model.py' --iterations 20 --warmup 3
  inferbench run --openai http://127.0.0.1:8000/v1 --model m --concurrency 1,8,64 --requests 500
  inferbench run --framework pytorch --model resnet50 --batch-sizes 1 4 --iterations 10 --warmup 3
  inferbench run benches/unit --set batch_size=4 --format json
  inferbench run --baseline-ref origin/main --include 'resnet50/*'

  inferbench run --exec 'python3 tokenize.py' --measure instructions --iterations 5`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := rf.options(cmd.Flags(), o, args)
			if err != nil {
				return err
			}
			if rf.dryRun {
				return run.Plan(cmd.Context(), opts, o.Stdout)
			}
			opts.Profile = *profile
			if opts.Selection.Benchmarks == nil {
				noteUnread(o, args)
			}
			if rf.baselineRef != "" {
				return runBaselineRef(cmd, o, &rf, opts)
			}
			prog := progress.New(o.Stderr, o.LookupEnv)
			opts.Observers = append(opts.Observers, prog)
			if !prog.Shown() {
				opts.Log = consoleHandler(o.Stderr, opts.LogLevel, cmd.Flags().Changed("log-level"))
			}
			r, err := run.Run(cmd.Context(), opts)
			return errors.Join(err, writeCSVCopy(o, rf.csvCopy, r))
		},
	}
	f := cmd.Flags()
	profileFlag(cmd, profile)
	rf.sel.register(cmd)
	rf.quick.register(f)
	f.IntVar(&rf.warmup, "warmup-iterations", 0, "warm-up iterations per scenario (overrides definitions)")
	alias(f, "warmup", "warmup-iterations")
	f.IntVar(&rf.iterations, "measurement-iterations", 0, "measured iterations per scenario, requests with --openai (overrides definitions; --openai's default: 100)")
	alias(f, "iterations", "measurement-iterations")
	alias(f, "requests", "measurement-iterations", "the measured requests of --openai's scenarios and sweep steps")
	f.DurationVar(&rf.minTime, "min-time", 0, "keep measuring each scenario for at least this long")
	f.DurationVar(&rf.maxTime, "max-time", 0, "stop measuring a scenario after this long")
	f.DurationVar(&rf.timeout, "timeout", 0, "per-iteration timeout (default 5m)")
	outputFlags(f, &rf.outputDir, &rf.format)
	f.StringVar(&rf.logLevel, "log-level", "", "log level on the console when piped or in CI: debug, info, warn or error (default: warnings and errors only; run.log keeps info, and debug when asked)")
	f.BoolVar(&rf.dryRun, "dry-run", false, "list the scenarios that would run, and run nothing")
	f.StringVar(&rf.measure, "measure", "time", "time or instructions: count each iteration's instructions under valgrind's callgrind (needs valgrind; docs/verdicts.md)")
	f.StringArrayVar(&rf.secretParam, "secret-param", nil, "a parameter whose values are secrets (repeatable): masked whole wherever the run writes them; other parameters are written as given, masked only where they hold a secret of the environment or the command line")
	f.IntVar(&rf.keepSamples, "keep-samples", engine.DefaultKeepSamples, "raw samples kept per metric in run.json (0 keeps all)")

	f.DurationVar(&rf.monitor.Interval, "monitor-interval", monitor.DefaultInterval, "resource sampling period (process tree, system, GPU, energy)")
	f.BoolVar(&rf.monitor.Off, "no-monitor", false, "do not sample resources beside the scenarios")
	f.BoolVar(&rf.monitor.Overhead, "monitor-overhead", false, "run every scenario again without monitors and report the difference")
	f.Float64Var(&rf.monitor.Grid.IntensityGPerKWh, "grid-intensity", result.DefaultGrid.IntensityGPerKWh, "carbon intensity of the electricity for co2e_g, in g CO2e/kWh")
	f.Float64Var(&rf.monitor.Grid.PUE, "pue", result.DefaultGrid.PUE, "power usage effectiveness applied to measured energy for co2e_g")

	rf.sf.register(f)
	rf.cf.register(f)
	rf.alerts.register(f)
	rf.scaleout.register(f)
	rf.otlp.register(f)
	rf.export.register(f)
	f.StringVar(&rf.baseline, "baseline", "", "compare the run with this baseline afterwards (exit code 3 on a regression)")
	f.StringVar(&rf.baselineRef, "baseline-ref", "", "run the scenarios at this git ref too (a temporary worktree; Go functions built there), interleaved with the working tree's, and compare them pairwise (exit code 3 on a regression); docs/ci.md")
	f.BoolVar(&rf.noStore, "no-store", false, "do not record the run in the history store")
	f.StringVar(&rf.csvCopy, "csv", "", "also write the run's summary.csv (one row per scenario and metric) to this file; {timestamp} in the name is the run's start, YYYYMMDD_HHMMSS: --csv results/benchmark_results_{timestamp}.csv")
	f.BoolVar(&rf.noHTML, "no-html-report", false, "do not write report.html into the run folder")
	f.BoolVar(&rf.noRequestLog, "no-request-log", false, "do not write requests/<scenario>.jsonl (each serving request's raw timestamps)")
	f.StringVar(&rf.live.Addr, "metrics-addr", "", "serve Prometheus /metrics and the live view here during the run (e.g. 127.0.0.1:9464)")
	f.StringVar(&rf.live.Token, "metrics-token", "", "bearer token for --metrics-addr (default $INFERBENCH_TOKEN); required off loopback")
	f.DurationVar(&rf.live.Linger, "metrics-linger", 0, "keep serving --metrics-addr this long after the run, for a last scrape")
	groupFlags(cmd, runGroups...)
	needFlags(cmd, runNeeds...)
	return cmd
}

// runGroups are run's --help, by job.
var runGroups = []flagGroup{
	{"What to run", []string{"include", "exclude", "category", "tag", "model", "model-id", "set", "enable-mock",
		"num-tokens-to-generate", "measure", "secret-param", "dry-run"}},
	{"How long", []string{"warmup-iterations", "measurement-iterations", "min-time", "max-time", "timeout"}},
	{"Load (with --openai)", []string{"concurrency", "rate", "arrival", "burstiness", "duration", "ramp-up",
		"max-concurrency", "sweep", "sweep-steps", "offline"}},
	{"Quick mode: a command, no definition (--exec)", []string{"exec", "shell", "name", "exec-metrics"}},
	{"Quick mode: an OpenAI-compatible server, no definition (--openai)", []string{"openai", "endpoint", "api-key-env",
		"input-tokens", "output-tokens", "prompts", "shared-prefix", "ignore-eos", "no-stream", "no-include-usage", "seed", "slo"}},
	{"Quick mode: a vision model in a framework worker, no definition (--framework)", []string{"framework",
		"batch-sizes", "dtype", "variant", "device", "image-size", "threads"}},
	{"Resources and profiling", []string{"monitor-interval", "no-monitor", "monitor-overhead", "grid-intensity", "pue", "profile"}},
	{"Comparison and gate", []string{"baseline", "baseline-ref", "threshold", "thresholds-file", "budget-file",
		"alpha", "gate", "uncorrected", "strict"}},
	{"Output", []string{"output-dir", "format", "log-level", "csv", "keep-samples", "no-html-report", "no-request-log",
		"metrics-addr", "metrics-token", "metrics-linger", "otlp-endpoint", "otlp-span-rate"}},
	{"Store", []string{"store", "no-store"}},
	{"Scale-out", []string{"shard", "shard-costs", "group", "agents", "agent", "start-at", "barrier-timeout"}},
	{"Export and alerts", []string{"export", "tracking-uri", "experiment", "project", "entity", "export-timeout",
		"alert", "alerts-file", "alert-webhook-env"}},
}

// runNeeds are run's flags that work only with another: given alone, they are refused.
var runNeeds = []need{
	{[]string{"shell", "name", "exec-metrics"}, []string{"exec"}},
	{[]string{"endpoint", "api-key-env", "input-tokens", "output-tokens", "prompts", "shared-prefix", "ignore-eos",
		"no-stream", "no-include-usage", "seed", "slo", "concurrency", "rate", "sweep", "offline", "ramp-up"}, []string{"openai"}},
	{[]string{"arrival"}, []string{"rate", "sweep"}},
	{[]string{"burstiness"}, []string{"arrival"}},
	{[]string{"duration"}, []string{"rate"}},
	{[]string{"max-concurrency"}, []string{"rate", "sweep", "offline"}},
	{[]string{"sweep-steps"}, []string{"sweep"}},
	{[]string{"batch-sizes", "dtype", "variant", "device", "image-size", "threads"}, []string{"framework"}},
	{[]string{"metrics-token", "metrics-linger"}, []string{"metrics-addr"}},
	{[]string{"otlp-span-rate"}, []string{"otlp-endpoint"}},
	{[]string{"shard-costs"}, []string{"shard"}},
	{[]string{"agent", "start-at"}, []string{"agents"}},
	{[]string{"barrier-timeout"}, []string{"start-at"}},
	{[]string{"tracking-uri", "experiment", "project", "entity", "export-timeout"}, []string{"export"}},
	{[]string{"alert-webhook-env"}, []string{"alert", "alerts-file"}},
}

// writeCSVCopy writes the run's summary CSV to the --csv file, {timestamp} replaced by the run's
// start, so that a script that names its results benchmark_results_20251113_134337.csv finds
// them where it did.
func writeCSVCopy(o *IO, pattern string, r *result.Run) error {
	if pattern == "" || r == nil {
		return nil
	}
	path := inDir(o, strings.ReplaceAll(pattern, "{timestamp}", r.StartedAt.Format("20060102_150405")))
	var buf bytes.Buffer
	if err := result.WriteCSV(&buf, r); err != nil {
		return fmt.Errorf("--csv %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("--csv %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, buf.Bytes()); err != nil {
		return fmt.Errorf("--csv %s: %w", path, err)
	}
	fmt.Fprintf(o.Stderr, "csv: %s\n", path)
	return nil
}

// options turns the flags into run.Options.
func (rf *runFlags) options(f *pflag.FlagSet, o *IO, args []string) (run.Options, error) {
	opts := run.Options{SecretParams: rf.secretParam,
		Selection: rf.sel.selection(o, args), KeepSamples: rf.keepSamples,
		Monitor: rf.monitor, OutputDir: rf.outputDir, NoRequestLog: rf.noRequestLog, NoHTMLReport: rf.noHTML,
		Store: rf.sf.url, NoStore: rf.noStore, Baseline: rf.baseline, AlertWebhookEnv: rf.alerts.envName,
		Format: rf.format, Stdout: o.Stdout, Stderr: o.Stderr,
		Dir: o.Dir, Env: o.Env, Args: o.Args, Version: Version,
	}
	var err error
	if opts.Measure, err = suite.ParseMeasure(rf.measure); err != nil {
		return opts, usageErr("--%v", err)
	} else if opts.Measure != "" {
		if _, err := callgrind.Find(); err != nil {
			return opts, err
		}
	}
	opts.KeepSamples = keptSamples(rf.keepSamples)
	if f.Changed("warmup-iterations") || f.Changed("warmup") {
		opts.Load.WarmupIterations = &rf.warmup
	}
	if f.Changed("measurement-iterations") || f.Changed("iterations") || f.Changed("requests") {
		opts.Load.MeasurementIterations = &rf.iterations
		rf.quick.OpenAI.Requests = rf.iterations // the server's scenarios (and sweep steps) send as many
	}
	opts.Load.MinTime, opts.Load.MaxTime, opts.Load.Timeout = rf.minTime, rf.maxTime, rf.timeout
	if !rf.monitor.Off && rf.monitor.Interval < time.Millisecond {
		return opts, usageErr("--monitor-interval %v: want 1ms or more", rf.monitor.Interval)
	}
	if rf.live.Addr != "" {
		if rf.live.Token, err = web.ServerToken(rf.live.Addr, rf.live.Token, "--metrics-addr", o.LookupEnv); err != nil {
			return opts, usageErr("%v", err)
		}
		rf.live.Log, opts.Observers = o.Stderr, []run.Observer{&rf.live}
		opts.Secrets = append(opts.Secrets, rf.live.Token)
	}
	if exp, err := rf.export.observer(o); err != nil {
		return opts, err
	} else if exp != nil {
		opts.Observers = append(opts.Observers, exp)
	}
	if opts.LogLevel, err = parseLevel(rf.logLevel); err != nil {
		return opts, err
	}
	if opts.Compare, err = rf.cf.config(o, f); err != nil {
		return opts, err
	}
	if opts.Alerts, err = rf.alerts.parse(env(o)); err != nil {
		return opts, err
	}
	if opts.Tracing, err = rf.otlp.tracing(); err != nil {
		return opts, err
	}
	if opts.Scaleout, err = rf.scaleout.scaleout(o.LookupEnv); err != nil {
		return opts, err
	}
	sel := &opts.Selection
	models := sel.Filter.Model
	if rf.quick.OpenAI.URL != "" && len(models) == 0 && sel.ModelID != "" {
		models = []string{sel.ModelID} // --model-id names the served model
	}
	if sel.Benchmarks, sel.Filter.Model, err = rf.quick.benchmarks(models, env(o).WorkDir()); err != nil {
		return opts, usageErr("%v", err)
	}
	return opts, nil
}

// alertFlags are run's alert options.
type alertFlags struct {
	rules   []string
	file    string
	envName string
}

func (a *alertFlags) register(f *pflag.FlagSet) {
	f.StringArrayVar(&a.rules, "alert", nil, `alert rule, e.g. "latency_ms.p95 > baseline * 1.3" or "growth(memory_mb, 7d) > 10%" (repeatable)`)
	f.StringVar(&a.file, "alerts-file", "", "file of alert rules, one a line (# comments)")
	f.StringVar(&a.envName, "alert-webhook-env", alert.WebhookEnv, "with --alert or --alerts-file: environment variable holding the webhook URL (Slack-compatible JSON is posted)")
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level // info when not given: the console still shows warnings only (consoleHandler)
	if err := l.UnmarshalText([]byte(s)); s != "" && err != nil {
		return 0, usageErr("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// alias registers name as another name of the flag of, sharing its value; --help lists it
// right after that flag, with what the name says where it is given.
func alias(f *pflag.FlagSet, name, of string, says ...string) {
	usage := "alias of --" + of
	if len(says) > 0 {
		usage += ": " + strings.Join(says, "; ")
	}
	f.Var(f.Lookup(of).Value, name, usage)
	_ = f.SetAnnotation(name, aliasKey, []string{of})
}

// keptSamples turns a --keep-samples flag's value into the options' KeepSamples: the flag's 0
// keeps all samples (a negative KeepSamples), where an option's 0 is its default.
func keptSamples(flag int) int {
	if flag == 0 {
		return -1
	}
	return flag
}
