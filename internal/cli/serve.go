package cli

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/cli/web"
	"github.com/inferbench/inferbench/internal/history"
	"github.com/inferbench/inferbench/internal/stage/recovery"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
)

type serveFlags struct {
	addr, token, resultsDir string
	store                   storeFlags
	// cf judges the compare page and /api/compare as `compare` does: the project's
	// benchmark_thresholds.json and performance-budget.yml, or the same flags.
	cf compareFlags
}

func newServe(o *IO) *cobra.Command {
	var sf serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the dashboard, the JSON API and Prometheus /metrics over the history store",
		Long: `serve shows the history store in a browser: the runs, one run, any two runs compared, trends per
metric with change points, baselines, and a live view of the run in progress (it follows
--results-dir/latest). /api/... is a read-only JSON API and /metrics exports the newest run (or the
run in progress) for Prometheus.

Binding anything but loopback requires a bearer token: --token, or the INFERBENCH_TOKEN variable.
Clients send "Authorization: Bearer TOKEN"; a browser can open /?token=TOKEN once.

The compare page and /api/compare judge as 'inferbench compare' does, from the same folder: its
benchmark_thresholds.json and performance-budget.yml when present (--thresholds-file,
--budget-file name others), --threshold, --gate, --alpha and --strict.`,
		Example: `  inferbench serve                                  # http://127.0.0.1:8080
  inferbench serve --store postgres://bench@db/bench --addr :8080 --token "$(cat token)"
  inferbench serve --budget-file ci/performance-budget.yml --threshold latency=10
  curl -s localhost:8080/api/runs | jq '.[0]'
  curl -s localhost:8080/metrics | grep inferbench_inference_duration_seconds`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runServe(cmd.Context(), o, &sf, cmd.Flags()) },
	}
	f := cmd.Flags()
	f.StringVar(&sf.addr, "addr", "127.0.0.1:8080", "address to listen on (host:port)")
	sf.store.register(f)
	f.StringVar(&sf.token, "token", "", "bearer token required of clients (default $"+web.TokenEnv+"); required off loopback")
	f.StringVar(&sf.resultsDir, "results-dir", "benchmark_results", "results folder whose latest run the live view follows (\"\" for none)")
	sf.cf.register(f)
	groupFlags(cmd,
		flagGroup{"The server", []string{"addr", "token"}},
		flagGroup{"What it serves", []string{"results-dir", "store"}},
		flagGroup{"Comparison and gate", []string{"threshold", "thresholds-file", "budget-file", "alpha", "gate", "uncorrected", "strict"}})
	return cmd
}

func runServe(ctx context.Context, o *IO, sf *serveFlags, f *pflag.FlagSet) error {
	token, err := web.ServerToken(sf.addr, sf.token, "--addr", o.LookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	cfg, err := sf.cf.config(o, f)
	if err != nil {
		return err
	}
	st, err := sf.store.open(ctx, o)
	if err != nil {
		return err
	}
	defer st.Close()
	resultsDir := ""
	if sf.resultsDir != "" {
		resultsDir = inDir(o, sf.resultsDir)
	}
	return newServer(ctx, st, cfg, web.WithToken(token)).Serve(ctx, sf.addr, resultsDir, recovery.StoreLabel(sf.store.url, env(o).Lookup, o.Dir), o.Stdout)
}

// newServer is serve's dashboard over st, judging comparisons with cfg and, as the command
// line does, thresholds from the stored runs' noise.
func newServer(ctx context.Context, st store.Store, cfg compare.Config, opts ...web.Option) *web.Server {
	judge := func(b, h *result.Run) *compare.Report {
		c := cfg
		c.History = history.NoiseHistory(context.WithoutCancel(ctx), st, h)
		return compare.Runs(b, h, c)
	}
	return web.New(st, append(opts, web.WithCompare(judge))...)
}
