package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/advice"
	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/engine"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
)

func init() { runExtensions = append(runExtensions, func() RunExtension { return &historyExt{} }) }

// Files a run with --baseline adds to its folder.
const (
	CompareJSONFile     = "compare.json"
	CompareMarkdownFile = "compare.md"
	AdviceFile          = "advice.json"
)

// historyExt records every run in the history store, checks budgets, and with --baseline compares
// the run against the named baseline: exit code 3 on a regression or an exceeded budget.
type historyExt struct {
	sf       storeFlags
	cf       compareFlags
	flags    *pflag.FlagSet
	baseline string
	noStore  bool
	alerts   alertFlags
}

var _ RunExtension = (*historyExt)(nil)

func (h *historyExt) Flags(f *pflag.FlagSet) {
	h.flags = f
	h.sf.register(f)
	h.cf.register(f)
	h.alerts.register(f)
	f.StringVar(&h.baseline, "baseline", "", "compare the run with this baseline afterwards (exit code 3 on a regression)")
	f.BoolVar(&h.noStore, "no-store", false, "do not record the run in the history store")
}

func (h *historyExt) Start(ctx context.Context, o *IO, dir string) ([]engine.Option, error) {
	// Validate the comparison settings before spending time on the run.
	if _, err := h.cf.config(o, h.flags); err != nil {
		return nil, err
	}
	if h.noStore && h.baseline != "" {
		return nil, usageErr("--baseline needs the history store: drop --no-store")
	}
	return nil, h.alerts.validate(o)
}

func (h *historyExt) Finish(ctx context.Context, o *IO, dir string, r *result.Run) (int, error) {
	cfg, err := h.cf.config(o, h.flags)
	if err != nil {
		return ExitError, err
	}
	var st store.Store
	if !h.noStore {
		st, err = h.sf.open(ctx, o)
		if err != nil {
			return ExitError, fmt.Errorf("history store: %w (results are in %s)", err, dir)
		}
		defer st.Close()
		if err := st.Put(ctx, r); err != nil {
			return ExitError, fmt.Errorf("history store: %w (results are in %s)", err, dir)
		}
	}
	code := ExitOK
	var rep *compare.Report
	var baseRun *result.Run
	if h.baseline != "" {
		b, err := st.Baseline(ctx, h.baseline)
		switch {
		case errors.Is(err, store.ErrNotFound):
			fmt.Fprintf(o.Stderr, "inferbench: baseline %q is not set: this run was not compared (set it with 'inferbench baseline set %s %s')\n", h.baseline, h.baseline, r.ID)
		case err != nil:
			return ExitError, err
		default:
			if baseRun, err = st.Get(ctx, b.RunID); err != nil {
				return ExitError, err
			}
			rep = compare.Runs(baseRun, r, cfg)
			rep.Old.Label, rep.New.Label = "baseline:"+h.baseline, r.ID
		}
	}
	if rep == nil { // budgets alone
		rep = &compare.Report{Old: compare.RunRef{ID: "-"}, New: compare.RunRef{ID: r.ID}, Alpha: cfg.Alpha}
		rep.Budgets, rep.BudgetsExceeded = compare.CheckRunBudgets(r, cfg.Budgets)
	}
	if baseRun != nil || len(rep.Budgets) > 0 {
		fmt.Fprintln(o.Stdout)
		render := report.BudgetsText
		if baseRun != nil {
			fmt.Fprintf(o.Stdout, "compared with baseline %s:\n", h.baseline)
			render = report.CompareText
		}
		if err := render(o.Stdout, rep); err != nil {
			return ExitError, err
		}
		var js, md bytes.Buffer
		_ = writeJSON(&js, rep)
		_ = report.CompareMarkdown(&md, rep)
		for name, data := range map[string][]byte{CompareJSONFile: js.Bytes(), CompareMarkdownFile: md.Bytes()} {
			if err := result.WriteFileAtomic(filepath.Join(dir, name), data); err != nil {
				fmt.Fprintln(o.Stderr, "inferbench:", err)
			}
		}
		if err := stepSummary(o, rep); err != nil {
			fmt.Fprintln(o.Stderr, "inferbench: GITHUB_STEP_SUMMARY:", err)
		}
	}
	if rep.Failed() {
		code = ExitRegression
	}
	h.advise(ctx, o, st, dir, r)
	h.alerts.fire(ctx, o, st, r, baseRun)
	return code, nil
}

// advise prints the advice rules' tips and keeps them in the run folder as advice.json.
func (h *historyExt) advise(ctx context.Context, o *IO, st store.Store, dir string, r *result.Run) {
	var hist advice.History
	if st != nil {
		hist = func(bench, sc, metric string) []float64 {
			xs, _ := historyValues(ctx, st, store.Query{Benchmark: bench, Scenario: sc, Metric: metric, Limit: 200})
			return xs
		}
	}
	tips := advice.For(r, advice.Rules{}, hist)
	if len(tips) == 0 {
		return
	}
	fmt.Fprintln(o.Stdout)
	for _, t := range tips {
		fmt.Fprintf(o.Stdout, "advice  %s (%s): %s\n", t.Scenario, t.Rule, t.Text)
	}
	if data, err := json.MarshalIndent(tips, "", "  "); err == nil {
		_ = result.WriteFileAtomic(filepath.Join(dir, AdviceFile), append(data, '\n'))
	}
}
