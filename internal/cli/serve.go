package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/internal/web"
	"github.com/inferbench/inferbench/run"
)

type serveFlags struct {
	addr, token, resultsDir string
	store                   storeFlags
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
Clients send "Authorization: Bearer TOKEN"; a browser can open /?token=TOKEN once.`,
		Example: `  inferbench serve                                  # http://127.0.0.1:8080
  inferbench serve --store postgres://bench@db/bench --addr :8080 --token "$(cat token)"
  curl -s localhost:8080/api/runs | jq '.[0]'
  curl -s localhost:8080/metrics | grep inferbench_inference_duration_seconds`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runServe(cmd.Context(), o, &sf) },
	}
	f := cmd.Flags()
	f.StringVar(&sf.addr, "addr", "127.0.0.1:8080", "address to listen on (host:port)")
	sf.store.register(f)
	f.StringVar(&sf.token, "token", "", "bearer token required of clients (default $"+web.TokenEnv+"); required off loopback")
	f.StringVar(&sf.resultsDir, "results-dir", "benchmark_results", "results folder whose latest run the live view follows (\"\" for none)")
	return cmd
}

func runServe(ctx context.Context, o *IO, sf *serveFlags) error {
	token, err := web.ServerToken(sf.addr, sf.token, "--addr", o.LookupEnv)
	if err != nil {
		return usageErr("%v", err)
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
	return web.New(st, web.WithToken(token)).Serve(ctx, sf.addr, resultsDir, run.StoreLabel(sf.store.url, env(o)), o.Stdout)
}
