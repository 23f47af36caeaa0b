package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/alert"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
)

// alertFlags are run's alert options.
type alertFlags struct {
	rules   []string
	file    string
	envName string
	parsed  []alert.Rule
}

func (a *alertFlags) register(f *pflag.FlagSet) {
	f.StringArrayVar(&a.rules, "alert", nil, `alert rule, e.g. "latency_ms.p95 > baseline * 1.3" or "growth(memory_mb, 7d) > 10%" (repeatable)`)
	f.StringVar(&a.file, "alerts-file", "", "file of alert rules, one a line (# comments)")
	f.StringVar(&a.envName, "alert-webhook-env", alert.WebhookEnv, "environment variable holding the webhook URL (Slack-compatible JSON is posted)")
}

func (a *alertFlags) validate(o *IO) error {
	lines := append([]string(nil), a.rules...)
	if a.file != "" {
		data, err := os.ReadFile(inDir(o, a.file))
		if err != nil {
			return usageErr("--alerts-file: %v", err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
	}
	a.parsed = a.parsed[:0]
	for _, l := range lines {
		r, err := alert.Parse(l)
		if err != nil {
			return usageErr("%v", err)
		}
		a.parsed = append(a.parsed, r)
	}
	return nil
}

// fire evaluates the rules and posts what fired. Nothing here fails the run: problems are
// printed as warnings.
func (a *alertFlags) fire(ctx context.Context, o *IO, st store.Store, r, baseline *result.Run) {
	if len(a.parsed) == 0 {
		return
	}
	var hist alert.History
	if st != nil {
		hist = func(ctx context.Context, bench, sc, metric string, since time.Time) ([]float64, error) {
			return historyValues(ctx, st, store.Query{Benchmark: bench, Scenario: sc, Metric: metric, Since: since})
		}
	}
	fired, notes := alert.Evaluate(ctx, a.parsed, r, baseline, hist)
	for _, n := range notes {
		fmt.Fprintln(o.Stderr, "inferbench: warning:", n)
	}
	for _, f := range fired {
		fmt.Fprintln(o.Stderr, "inferbench: ALERT", f.Message)
	}
	if len(fired) == 0 {
		return
	}
	url, _ := o.LookupEnv(a.envName)
	if url == "" {
		fmt.Fprintf(o.Stderr, "inferbench: warning: %d alert(s) fired but $%s is not set: nothing posted\n", len(fired), a.envName)
		return
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := alert.Post(pctx, nil, url, r, fired); err != nil {
		fmt.Fprintln(o.Stderr, "inferbench: warning: alerts not delivered:", err)
	}
}
