package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/redact"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"

	_ "github.com/inferbench/inferbench/store/postgres" // --store postgres://...
	_ "github.com/inferbench/inferbench/store/sqlite"   // the default store
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

func (sf *storeFlags) location(o *IO) string {
	if sf.url != "" {
		return sf.url
	}
	u, _ := o.LookupEnv(store.EnvVar)
	return u
}

func (sf *storeFlags) open(ctx context.Context, o *IO) (store.Store, error) {
	return store.Open(ctx, store.Params{URL: sf.location(o), Dir: o.Dir})
}

// historyValues returns the values of the points st.History(q) finds, oldest first.
func historyValues(ctx context.Context, st store.Store, q store.Query) ([]float64, error) {
	pts, err := st.History(ctx, q)
	if err != nil {
		return nil, err
	}
	xs := make([]float64, len(pts))
	for i, p := range pts {
		xs[i] = p.Value
	}
	return xs, nil
}

// workDir is the command's directory: o.Dir, or "." for the process's.
func workDir(o *IO) string {
	if o.Dir == "" {
		return "."
	}
	return o.Dir
}

// inDir resolves a relative path against the command's directory.
func inDir(o *IO, p string) string {
	if o.Dir != "" && !filepath.IsAbs(p) {
		return filepath.Join(o.Dir, p)
	}
	return p
}

// runSource yields the run a command-line reference names, opening the store only when needed.
type runSource struct {
	o  *IO
	sf *storeFlags
	st store.Store
}

func (rs *runSource) store(ctx context.Context) (store.Store, error) {
	if rs.st == nil {
		st, err := rs.sf.open(ctx, rs.o)
		if err != nil {
			return nil, err
		}
		rs.st = st
	}
	return rs.st, nil
}

func (rs *runSource) Close() {
	if rs.st != nil {
		rs.st.Close()
	}
}

// load resolves ref (see find) and returns the run with its text redacted (a run recorded by an
// older version may hold a secret).
func (rs *runSource) load(ctx context.Context, ref string) (*result.Run, error) {
	r, err := rs.find(ctx, ref)
	redact.Run(r)
	return r, err
}

// find resolves ref: a run.json or run folder; a run id in --results-dir; "latest",
// "baseline:NAME" or a run id in the store.
func (rs *runSource) find(ctx context.Context, ref string) (*result.Run, error) {
	isStoreRef := ref == "latest" || strings.HasPrefix(ref, "baseline:")
	if !isStoreRef {
		if _, err := os.Stat(inDir(rs.o, ref)); err == nil {
			return result.Load(inDir(rs.o, ref))
		}
		if rs.sf.resultsDir != "" && !strings.ContainsAny(ref, `/\`) {
			p := filepath.Join(inDir(rs.o, rs.sf.resultsDir), ref)
			if _, err := os.Stat(filepath.Join(p, result.RunFile)); err == nil {
				return result.Load(p)
			}
		}
	}
	st, err := rs.store(ctx)
	if err != nil {
		return nil, err
	}
	r, err := store.Resolve(ctx, st, ref)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, &CodeError{Code: ExitError, Err: fmt.Errorf("%s: %w (want a run.json, a run folder, a run id, latest or baseline:NAME)", ref, err)}
		}
		return nil, err
	}
	return r, nil
}

// compareFlags configure a comparison (compare, run --baseline).
type compareFlags struct {
	thresholds     []string
	thresholdsFile string
	budgetFile     string
	alpha          float64
}

func (cf *compareFlags) register(f *pflag.FlagSet) {
	f.StringArrayVar(&cf.thresholds, "threshold", nil, "regression threshold override, [BENCHMARK:]METRIC_OR_KIND=PERCENT (repeatable; kinds: latency, memory, throughput, cpu)")
	f.StringVar(&cf.thresholdsFile, "thresholds-file", compare.ThresholdsFileName, "thresholds file (read when present)")
	f.StringVar(&cf.budgetFile, "budget-file", compare.BudgetFileName, "performance budget file (read when present)")
	f.Float64Var(&cf.alpha, "alpha", 0.05, "false discovery rate across the comparison's tests")
}

func (cf *compareFlags) config(o *IO, f *pflag.FlagSet) (compare.Config, error) {
	cfg := compare.Config{Alpha: cf.alpha}
	if cf.alpha <= 0 || cf.alpha >= 1 {
		return cfg, usageErr("--alpha %v: want a rate between 0 and 1, e.g. 0.05", cf.alpha)
	}
	if p := inDir(o, cf.thresholdsFile); cf.thresholdsFile != "" {
		if err := cfg.Thresholds.LoadFile(p); err != nil && !(errors.Is(err, os.ErrNotExist) && !f.Changed("thresholds-file")) {
			return cfg, &CodeError{Code: ExitUsage, Err: err}
		}
	}
	for _, t := range cf.thresholds {
		if err := cfg.Thresholds.Set(t); err != nil {
			return cfg, usageErr("--threshold: %v", err)
		}
	}
	if p := inDir(o, cf.budgetFile); cf.budgetFile != "" {
		bf, err := compare.LoadBudgetFile(p)
		switch {
		case err == nil:
			cfg.Budgets = bf
		case errors.Is(err, os.ErrNotExist) && !f.Changed("budget-file"):
		default:
			return cfg, &CodeError{Code: ExitUsage, Err: err}
		}
	}
	return cfg, nil
}
