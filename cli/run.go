package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/engine"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// RunExtension plugs a capability into `inferbench run` (monitors, history, reports) without
// reshaping it: its flags, engine options before the run, and work after it.
type RunExtension interface {
	// Flags registers the extension's flags.
	Flags(f *pflag.FlagSet)
	// Start is called with the run folder before any scenario runs.
	Start(ctx context.Context, o *IO, dir string) ([]engine.Option, error)
	// Finish is called with the finished (or interrupted) run, after run.json was written. A
	// non-zero code (e.g. ExitRegression) becomes the exit code unless a worse one applies.
	Finish(ctx context.Context, o *IO, dir string, r *result.Run) (code int, err error)
}

// QuickRun builds benchmarks from flags instead of YAML (--exec, and others from their files).
type QuickRun interface {
	Flags(f *pflag.FlagSet)
	// Benchmarks returns the benchmarks its flags describe, or nil when they were not used.
	Benchmarks(o *IO, sel *selection) ([]*suite.Benchmark, error)
}

var (
	runExtensions []func() RunExtension
	quickRuns     = []func() QuickRun{func() QuickRun { return &execQuick{} }}
)

type runFlags struct {
	sel         selection
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
}

func newRun(o *IO) *cobra.Command {
	var rf runFlags
	exts := make([]RunExtension, len(runExtensions))
	for i, mk := range runExtensions {
		exts[i] = mk()
	}
	quicks := make([]QuickRun, len(quickRuns))
	for i, mk := range quickRuns {
		quicks[i] = mk()
	}
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
  inferbench run benches/unit --set batch_size=4 --format json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd, o, &rf, exts, quicks, args)
		},
	}
	f := cmd.Flags()
	rf.sel.register(cmd)
	f.IntVar(&rf.warmup, "warmup-iterations", 0, "warm-up iterations per scenario (overrides definitions)")
	f.IntVar(&rf.warmup, "warmup", 0, "alias of --warmup-iterations")
	f.IntVar(&rf.iterations, "measurement-iterations", 0, "measured iterations per scenario (overrides definitions)")
	f.IntVar(&rf.iterations, "iterations", 0, "alias of --measurement-iterations")
	f.DurationVar(&rf.minTime, "min-time", 0, "keep measuring each scenario for at least this long")
	f.DurationVar(&rf.maxTime, "max-time", 0, "stop measuring a scenario after this long")
	f.DurationVar(&rf.timeout, "timeout", 0, "per-iteration timeout (default 5m)")
	f.StringVar(&rf.outputDir, "output-dir", "benchmark_results", "folder that receives a timestamped folder per run")
	f.StringVar(&rf.format, "format", "table", "summary on stdout: table, json or none")
	f.StringVar(&rf.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	f.BoolVar(&rf.dryRun, "dry-run", false, "list the scenarios that would run, and run nothing")
	f.IntVar(&rf.keepSamples, "keep-samples", 10000, "raw samples kept per metric in run.json (0 keeps all)")
	for _, q := range quicks {
		q.Flags(f)
	}
	for _, e := range exts {
		e.Flags(f)
	}
	return cmd
}

func (rf *runFlags) loadOverrides(f *pflag.FlagSet) load.Config {
	var c load.Config
	if f.Changed("warmup-iterations") || f.Changed("warmup") {
		c.WarmupIterations = &rf.warmup
	}
	if f.Changed("measurement-iterations") || f.Changed("iterations") {
		c.MeasurementIterations = &rf.iterations
	}
	c.MinTime, c.MaxTime, c.Timeout = rf.minTime, rf.maxTime, rf.timeout
	return c
}

func runRun(cmd *cobra.Command, o *IO, rf *runFlags, exts []RunExtension, quicks []QuickRun, args []string) error {
	ctx := cmd.Context()
	switch rf.format {
	case "table", "json", "none":
	default:
		return usageErr("--format %q: want table, json or none", rf.format)
	}
	level, err := parseLevel(rf.logLevel)
	if err != nil {
		return err
	}
	overrides := rf.loadOverrides(cmd.Flags())
	if err := (load.Config{}).Merge(overrides).Validate(); err != nil {
		return usageErr("%v", err)
	}

	var benches []*suite.Benchmark
	quick := false
	for _, q := range quicks {
		bs, err := q.Benchmarks(o, &rf.sel)
		if err != nil {
			return err
		}
		if bs != nil {
			quick = true
			benches = append(benches, bs...)
		}
	}
	if !quick {
		if benches, err = loadBenchmarks(o, args); err != nil {
			return err
		}
	}
	scenarios, err := rf.sel.scenarios(benches)
	if err != nil {
		return err
	}
	if len(scenarios) == 0 {
		return usageErr("no scenario selected (%d benchmarks found; see 'inferbench list')", len(benches))
	}
	if rf.dryRun {
		for _, sc := range scenarios {
			fmt.Fprintf(o.Stdout, "%s\t%s\n", sc.ID(), sc.Benchmark.Source())
		}
		return nil
	}

	outRoot := inDir(o, rf.outputDir)
	started := time.Now()
	dir, err := result.NewRunDir(outRoot, started)
	if err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(dir, result.LogFile))
	if err != nil {
		return err
	}
	defer logFile.Close()
	handlers := teeHandler{slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: min(level, slog.LevelInfo)})}
	if !interactive(o.Stderr, o) {
		handlers = append(handlers, slog.NewTextHandler(o.Stderr, &slog.HandlerOptions{Level: level}))
	}
	log := slog.New(handlers)

	run := &result.Run{
		Schema: result.Schema, ID: filepath.Base(dir), Partial: true, StartedAt: started,
		Environment: collectSysinfo(cmd, o).Map(),
		Config:      result.Config{Args: o.Args, Dir: o.Dir, Filters: rf.sel.describe(), Set: rf.sel.setStrings()},
		Scenarios:   []result.Scenario{},
	}
	if err := result.Save(dir, run); err != nil {
		return err
	}
	log.Info("run started", "dir", dir, "scenarios", len(scenarios))

	prog := newProgress(log, o, len(scenarios))
	opts := []engine.Option{
		engine.WithLoad(overrides), engine.WithChecker(rf.sel.checker(o)), engine.WithListener(prog),
		engine.WithKeepSamples(rf.keepSamples), engine.WithEnv(o.Env),
	}
	for _, e := range exts {
		eo, err := e.Start(ctx, o, dir)
		if err != nil {
			return err
		}
		opts = append(opts, eo...)
	}
	eng := engine.New(opts...)
	var saveMu sync.Mutex
	var saveErr error
	runErr := eng.Run(ctx, scenarios, func(sc result.Scenario) {
		saveMu.Lock()
		defer saveMu.Unlock()
		run.Scenarios = append(run.Scenarios, sc)
		run.Tally()
		if err := result.Save(dir, run); err != nil && saveErr == nil {
			saveErr = err
			log.Error("saving results", "err", err)
		}
	})
	prog.finish()
	interrupted := errors.Is(runErr, context.Canceled) || ctx.Err() != nil
	run.Partial = interrupted
	run.FinishedAt = time.Now()
	run.Tally()
	if err := result.Save(dir, run); err != nil {
		return fmt.Errorf("results in %s could not be written: %w", dir, err)
	}
	if err := result.LinkLatest(outRoot, dir); err != nil {
		log.Warn("could not link latest", "err", err)
	}
	log.Info("run finished", "dir", dir, "ok", run.Summary.Succeeded, "failed", run.Summary.Failed, "skipped", run.Summary.Skipped, "partial", run.Partial)

	switch rf.format {
	case "table":
		if err := report.Table(o.Stdout, run); err != nil {
			return err
		}
		fmt.Fprintf(o.Stdout, "results: %s\n", dir)
	case "json":
		if err := result.WriteJSON(o.Stdout, run); err != nil {
			return err
		}
	}
	code := ExitOK
	// Extensions finish on a context that is not the cancelled one, so an interrupted run is
	// still recorded.
	fctx := context.WithoutCancel(ctx)
	for _, e := range exts {
		c, err := e.Finish(fctx, o, dir, run)
		if err != nil {
			fmt.Fprintln(o.Stderr, "inferbench:", err)
			c = max(c, ExitError)
		}
		code = worse(code, c)
	}
	switch {
	case interrupted:
		return &CodeError{Code: ExitError, Err: fmt.Errorf("interrupted: partial results in %s", dir)}
	case run.Summary.Failed > 0:
		return &CodeError{Code: ExitError, Err: fmt.Errorf("%d of %d scenarios failed (details in %s)", run.Summary.Failed, run.Summary.Total, filepath.Join(dir, result.LogFile))}
	case code != ExitOK:
		return &CodeError{Code: code}
	}
	return nil
}

// worse picks the exit code to report: a regression (3) over an error (1) over success.
func worse(a, b int) int {
	rank := func(c int) int {
		switch c {
		case ExitOK:
			return 0
		case ExitRegression:
			return 2
		}
		return 1
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}
