package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/engine"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
	"github.com/inferbench/inferbench/web"
)

func init() {
	extraCommands = append(extraCommands, newServe)
	runExtensions = append(runExtensions, func() RunExtension { return &liveMetrics{} })
}

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

// serverToken returns the token from the flag or the environment, and refuses a non-loopback
// address without one.
func serverToken(o *IO, addr, flagToken, flagName string) (string, error) {
	token := flagToken
	if token == "" {
		token, _ = o.LookupEnv(web.TokenEnv)
	}
	if token == "" && !web.Loopback(addr) {
		return "", usageErr("%s %s is not a loopback address: set a bearer token with --%s or $%s", flagName, addr, map[string]string{"--addr": "token", "--metrics-addr": "metrics-token"}[flagName], web.TokenEnv)
	}
	return token, nil
}

func runServe(ctx context.Context, o *IO, sf *serveFlags) error {
	token, err := serverToken(o, sf.addr, sf.token, "--addr")
	if err != nil {
		return err
	}
	url := sf.store.location(o)
	if url == "" {
		url = store.SQLitePath("", o.Dir)
	}
	st, err := sf.store.open(ctx, o)
	if err != nil {
		return err
	}
	defer st.Close()
	srv := web.New(st, web.WithToken(token))
	ln, err := net.Listen("tcp", sf.addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", sf.addr, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if sf.resultsDir != "" {
		go web.WatchResults(ctx, inDir(o, sf.resultsDir), time.Second, srv.Hub(), srv.Metrics())
	}
	fmt.Fprintf(o.Stdout, "serving %s on http://%s/\n", store.Redact(url), ln.Addr())
	return serveUntilDone(ctx, ln, srv)
}

// serveUntilDone serves until ctx is cancelled, then shuts down gracefully (event streams are cut).
func serveUntilDone(ctx context.Context, ln net.Listener, h http.Handler) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// liveMetrics is run's --metrics-addr: the live view, its events and /metrics, served while the
// run lasts. Scenarios reach it as run.json is rewritten after each one; a probe marks the one
// being measured.
type liveMetrics struct {
	addr, token string
	linger      time.Duration
	srv         *web.Server
	cancel      context.CancelFunc
	done        chan error
}

func (l *liveMetrics) Flags(f *pflag.FlagSet) {
	f.StringVar(&l.addr, "metrics-addr", "", "serve Prometheus /metrics and the live view here during the run (e.g. 127.0.0.1:9464)")
	f.StringVar(&l.token, "metrics-token", "", "bearer token for --metrics-addr (default $"+web.TokenEnv+"); required off loopback")
	f.DurationVar(&l.linger, "metrics-linger", 0, "keep serving --metrics-addr this long after the run, for a last scrape")
}

func (l *liveMetrics) Start(ctx context.Context, o *IO, dir string) ([]engine.Option, error) {
	if l.addr == "" {
		return nil, nil
	}
	token, err := serverToken(o, l.addr, l.token, "--metrics-addr")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", l.addr, err)
	}
	l.srv = web.New(nil, web.WithToken(token))
	hub, metrics := l.srv.Hub(), l.srv.Metrics()
	hub.RunStarted(filepath.Base(dir), time.Now(), 0)
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.cancel = cancel
	l.done = make(chan error, 1)
	go func() { l.done <- serveUntilDone(sctx, ln, l.srv) }()
	go web.WatchRun(sctx, func() string { return filepath.Join(dir, result.RunFile) }, 250*time.Millisecond, hub, metrics)
	fmt.Fprintf(o.Stderr, "inferbench: live metrics on http://%s/metrics, live view on http://%s/live\n", ln.Addr(), ln.Addr())
	probe := func(ctx context.Context, sc *suite.Scenario, _ subject.Subject) (func(*result.Scenario), error) {
		hub.ScenarioStarted(sc.ID())
		metrics.Started(sc.Benchmark.Name, sc.Name)
		return func(*result.Scenario) {}, nil
	}
	return []engine.Option{engine.WithProbe(probe)}, nil
}

func (l *liveMetrics) Finish(ctx context.Context, o *IO, dir string, r *result.Run) (int, error) {
	if l.srv == nil {
		return ExitOK, nil
	}
	l.srv.Hub().SetRun(r)
	l.srv.Hub().RunFinished()
	l.srv.Metrics().SetRun(r)
	if l.linger > 0 {
		select {
		case <-time.After(l.linger):
		case <-ctx.Done():
		}
	}
	l.cancel()
	if err := <-l.done; err != nil {
		return ExitError, fmt.Errorf("--metrics-addr: %w", err)
	}
	return ExitOK, nil
}
