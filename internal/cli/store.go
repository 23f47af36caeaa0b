package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/base/readall"
	"github.com/inferbench/inferbench/internal/budget"
	"github.com/inferbench/inferbench/internal/cli/recorded"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/store"
)

// storeFlags are the history store options every history command shares.
type storeFlags struct {
	url        string
	resultsDir string
}

func (sf *storeFlags) register(f *pflag.FlagSet) {
	f.StringVar(&sf.url, "store", "", "history store: a SQLite file, sqlite:PATH or postgres://... (default $"+store.EnvVar+", else "+store.DefaultPath+")")
}

func (sf *storeFlags) registerResults(f *pflag.FlagSet) {
	f.StringVar(&sf.resultsDir, "results-dir", "benchmark_results", "folder of run folders, where a run id is looked up before the store")
}

func (sf *storeFlags) open(ctx context.Context, o *IO) (store.Store, error) {
	return run.OpenStore(ctx, sf.url, env(o))
}

// runs finds the runs the command's arguments name.
func (sf *storeFlags) runs(o *IO) *recorded.Source {
	return &recorded.Source{Env: env(o), Store: sf.url, ResultsDir: sf.resultsDir}
}

// twoRunFlags are how compare and explain find the two runs their arguments name (in
// --results-dir, then in the store) and judge them.
type twoRunFlags struct {
	sf storeFlags
	cf compareFlags
}

func (t *twoRunFlags) register(f *pflag.FlagSet) {
	t.sf.register(f)
	t.sf.registerResults(f)
	t.cf.register(f)
}

// open returns the source of the runs and the configuration that judges them; the caller closes
// the source.
func (t *twoRunFlags) open(o *IO, f *pflag.FlagSet) (*recorded.Source, compare.Config, error) {
	cfg, err := t.cf.config(o, f)
	if err != nil {
		return nil, cfg, err
	}
	return t.sf.runs(o), cfg, nil
}

// inDir resolves a relative path against the command's directory.
func inDir(o *IO, p string) string { return env(o).Path(p) }

// The thresholds and budget files read from the project directory when present (--thresholds-file,
// --budget-file).
const (
	thresholdsFileName = "benchmark_thresholds.json"
	budgetFileName     = "performance-budget.yml"
)

// compareFlags configure a comparison (compare, run --baseline).
type compareFlags struct {
	thresholds     []string
	thresholdsFile string
	budgetFile     string
	alpha          float64
	gate           []string
	strict         bool
	uncorrected    bool
}

func (cf *compareFlags) register(f *pflag.FlagSet) {
	f.StringArrayVar(&cf.thresholds, "threshold", nil, "regression threshold override, [BENCHMARK:]METRIC_OR_KIND=PERCENT (repeatable; kinds: latency, memory, throughput, cpu)")
	f.StringVar(&cf.thresholdsFile, "thresholds-file", thresholdsFileName, "thresholds file (read when present)")
	f.StringVar(&cf.budgetFile, "budget-file", budgetFileName, "performance budget file (read when present)")
	f.Float64Var(&cf.alpha, "alpha", 0.05, "false discovery rate across the comparison's tests")
	f.StringArrayVar(&cf.gate, "gate", nil, "also fail on this metric, [BENCHMARK:]METRIC (repeatable; e.g. peak_rss_mb, cpu_pct, latency_ms.p99, or all); by default only each scenario's primary metrics and budgets fail")
	f.BoolVar(&cf.uncorrected, "uncorrected", false, "judge each test by its own p-value at --alpha, as benchstat does, instead of controlling the false discovery rate across the comparison (more false alarms in a comparison of many scenarios)")
	f.BoolVar(&cf.strict, "strict", false, "also fail (exit 3) on a gated change beyond its threshold that could not be tested (a single value a side)")
}

func (cf *compareFlags) config(o *IO, f *pflag.FlagSet) (compare.Config, error) {
	cfg, err := cf.files(env(o), f.Changed("thresholds-file"), f.Changed("budget-file"))
	if err != nil {
		return cfg, err
	}
	for _, g := range cf.gate {
		e, err := budget.ParseGate(g)
		if err != nil {
			return cfg, usageErr("--gate: %v", err)
		}
		cfg.Gate = append(cfg.Gate, e)
	}
	return cfg, nil
}

// files reads --thresholds-file and --budget-file (relative to env's directory; they must be
// there when given, else are read when present) and the --threshold overrides into a
// compare.Config. Every problem is a usage error.
func (cf *compareFlags) files(env run.Env, requireThresholds, requireBudgets bool) (compare.Config, error) {
	cfg := compare.Config{Alpha: cf.alpha, Strict: cf.strict, Uncorrected: cf.uncorrected}
	if !(cf.alpha > 0 && cf.alpha < 1) { // NaN too
		return cfg, usageErr("--alpha %v: want a rate between 0 and 1, e.g. 0.05", cf.alpha)
	}
	if cf.thresholdsFile != "" {
		if err := cfg.Thresholds.LoadFile(env.Path(cf.thresholdsFile)); err != nil && (requireThresholds || !errors.Is(err, os.ErrNotExist)) {
			return cfg, exit.UsageError(fileFlag("--thresholds-file", err))
		}
	}
	for _, t := range cf.thresholds {
		if err := cfg.Thresholds.Set(t); err != nil {
			return cfg, usageErr("--threshold: %v", err)
		}
	}
	if cf.budgetFile != "" {
		bf, err := compare.LoadBudgetFile(env.Path(cf.budgetFile))
		switch {
		case err == nil:
			bf.Name = cf.budgetFile
			cfg.Budgets = bf
		case errors.Is(err, os.ErrNotExist) && !requireBudgets:
		default:
			return cfg, exit.UsageError(fileFlag("--budget-file", err))
		}
	}
	return cfg, nil
}

// fileFlag names the flag of a file that could not be read (a device, a named pipe, too large).
func fileFlag(flag string, err error) error {
	if errors.Is(err, readall.ErrNotRegular) || errors.Is(err, readall.ErrTooLarge) {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return err
}
