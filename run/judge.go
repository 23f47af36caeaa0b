package run

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/inferbench/inferbench/alert"
	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/history"
	"github.com/inferbench/inferbench/internal/stage/advice"
	"github.com/inferbench/inferbench/internal/stage/recovery"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"

	_ "github.com/inferbench/inferbench/store/postgres" // Store: postgres://...
	_ "github.com/inferbench/inferbench/store/sqlite"   // the default store
)

// The record and judge stages: the run goes into the history store, then is compared with the
// baseline, checked against its budgets, given advice, and the alert rules are evaluated.

// Verdict is what the judge stage found.
type Verdict struct {
	// Baseline is the baseline's name when the run was compared with one; BaselineRun its run.
	Baseline    string
	BaselineRun *result.Run
	// Against names the other side of a paired run (Options.Paired), which Compare compares.
	Against string
	// Compare is the comparison with the baseline, or the budgets alone (Old.ID "-"): a
	// regression or an exceeded budget fails the run.
	Compare *compare.Report
	Advice  []result.Tip // the advice rules' suggestions written to advice.json
	// Alerts are the alert rules that fired; AlertNotes why some could not be evaluated.
	Alerts     []alert.Firing
	AlertNotes []string
}

// comparedWith names what the run was compared with, for its errors: "baseline NAME", or the
// other side of a paired run ("against A", "against main").
func (v *Verdict) comparedWith() string {
	if v.Against != "" && v.Compare != nil {
		return "against " + v.Compare.Old.ID
	}
	return "baseline " + v.Baseline
}

// Failed reports whether the verdict fails the run.
func (v *Verdict) Failed() bool { return v.Compare != nil && v.Compare.Failed() }

// OpenStore opens the history store at loc: loc, else $INFERBENCH_STORE, else the default
// SQLite file under env's working directory.
func OpenStore(ctx context.Context, loc string, env Env) (store.Store, error) {
	return store.Open(ctx, store.Params{URL: recovery.StoreLocation(loc, env.Lookup), Dir: env.Dir})
}

// record puts the run into the history store and returns the store, open, for the judge stage;
// nil with NoStore or when the store failed (the error is kept; the run stays in its folder).
func (p *pipeline) record(ctx context.Context, dir string, r *result.Run) store.Store {
	if p.o.NoStore {
		return nil
	}
	st, err := OpenStore(ctx, p.o.Store, p.env)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("history store: %w (results are in %s)", err, dir))
		return nil
	}
	if err := recovery.PutNew(ctx, st, r); err != nil {
		st.Close()
		p.errs = append(p.errs, fmt.Errorf("history store: %w (results are in %s)", err, dir))
		return nil
	}
	ids, err := recovery.Record(ctx, st, filepath.Dir(dir), dir, recovery.PutNew)
	for _, id := range ids {
		fmt.Fprintf(p.o.Stderr, "inferbench: recorded killed run %s from %s, marked partial\n", id, filepath.Dir(dir))
	}
	if err != nil {
		fmt.Fprintf(p.o.Stderr, "inferbench: warning: recovering killed runs: %v\n", err)
	}
	if r.ID != filepath.Base(dir) { // the folder's id was taken in the store: run.json says the new one
		if err := result.Save(dir, r); err != nil {
			p.errs = append(p.errs, fmt.Errorf("run %s recorded, but %w", r.ID, err))
		}
	}
	return st
}

// judge compares the run with the baseline (or checks its budgets alone), and evaluates the
// advice rules and the alert rules with the store's history.
func (p *pipeline) judge(ctx context.Context, st store.Store, r *result.Run) *Verdict {
	cfg := p.o.Compare
	if st != nil && cfg.History == nil {
		cfg.History = history.NoiseHistory(ctx, st, r) // noise-aware thresholds (compare's noiseOf)
	}
	v := &Verdict{}
	if p.o.Paired != nil {
		v.Against = p.o.Paired.Against()
		v.Compare = p.o.Paired.Judge(r)
	}
	if p.o.Baseline != "" && st != nil {
		b, err := st.Baseline(ctx, p.o.Baseline)
		switch {
		case errors.Is(err, store.ErrNotFound):
			fmt.Fprintf(p.o.Stderr, "inferbench: baseline %q is not set: this run was not compared (set it with 'inferbench baseline set %s %s')\n", p.o.Baseline, p.o.Baseline, r.ID)
		case err != nil:
			p.errs = append(p.errs, err)
		default:
			if v.BaselineRun, err = st.Get(ctx, b.RunID); err != nil {
				p.errs = append(p.errs, err)
				break
			}
			v.Baseline = p.o.Baseline
			v.Compare = compare.Runs(v.BaselineRun, r, cfg)
			v.Compare.Old.Label, v.Compare.New.Label = "baseline:"+p.o.Baseline, r.ID
		}
	}
	if v.Compare == nil { // budgets alone
		v.Compare = &compare.Report{Old: compare.RunRef{ID: "-"}, New: compare.RunRef{ID: r.ID}, Alpha: cfg.Alpha}
		v.Compare.Budgets, v.Compare.BudgetsExceeded = compare.CheckRunBudgets(r, cfg.Budgets)
	}

	var hist advice.History
	if st != nil {
		hist = advice.FromStore(ctx, st, st)
	}
	v.Advice = advice.For(r, advice.Rules{}, hist)

	if len(p.o.Alerts) > 0 {
		var ahist alert.History
		if st != nil {
			ahist = func(ctx context.Context, bench, sc, metric string, since time.Time) ([]float64, error) {
				return history.Values(ctx, st, store.Query{Benchmark: bench, Scenario: sc, Metric: metric, Since: since})
			}
		}
		v.Alerts, v.AlertNotes = alert.Evaluate(ctx, p.o.Alerts, r, v.BaselineRun, ahist)
	}
	return v
}
