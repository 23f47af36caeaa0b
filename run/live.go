package run

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/inferbench/inferbench/engine"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
	"github.com/inferbench/inferbench/web"
)

// liveServer is Options.Live: the live view, its events and /metrics, served while the run lasts.
// Scenarios reach it as run.json is rewritten after each one; a probe marks the one being
// measured.
type liveServer struct {
	cfg    Live
	srv    *web.Server
	cancel context.CancelFunc
	done   chan error
}

// startLive starts serving when Live.Addr is set.
func (p *pipeline) startLive(ctx context.Context, w *writer) (*liveServer, error) {
	l := &liveServer{cfg: p.o.Live}
	if l.cfg.Addr == "" {
		return l, nil
	}
	token, err := ServerToken(l.cfg.Addr, l.cfg.Token, "--metrics-addr", p.env)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", l.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", l.cfg.Addr, err)
	}
	l.srv = web.New(nil, web.WithToken(token))
	hub, metrics := l.srv.Hub(), l.srv.Metrics()
	hub.RunStarted(filepath.Base(w.dir), time.Now(), 0)
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.cancel = cancel
	l.done = make(chan error, 1)
	go func() { l.done <- ServeUntilDone(sctx, ln, l.srv) }()
	go web.WatchRun(sctx, func() string { return filepath.Join(w.dir, result.RunFile) }, 250*time.Millisecond, hub, metrics)
	fmt.Fprintf(p.o.Stderr, "inferbench: live metrics on http://%s/metrics, live view on http://%s/live\n", ln.Addr(), ln.Addr())
	return l, nil
}

// options are the engine options that tell the live view which scenario is being measured.
func (l *liveServer) options() []engine.Option {
	if l.srv == nil {
		return nil
	}
	hub, metrics := l.srv.Hub(), l.srv.Metrics()
	probe := func(ctx context.Context, sc *suite.Scenario, _ subject.Subject) (func(*result.Scenario), error) {
		hub.ScenarioStarted(sc.ID())
		metrics.Started(sc.Benchmark.Name, sc.Name)
		return func(*result.Scenario) {}, nil
	}
	return []engine.Option{engine.WithProbe(probe)}
}

// finish publishes the finished run, serves it Live.Linger longer, and stops.
func (l *liveServer) finish(ctx context.Context, p *pipeline, r *result.Run) {
	if l.srv == nil {
		return
	}
	l.srv.Hub().SetRun(r)
	l.srv.Hub().RunFinished()
	l.srv.Metrics().SetRun(r)
	if l.cfg.Linger > 0 {
		select {
		case <-time.After(l.cfg.Linger):
		case <-ctx.Done():
		}
	}
	l.cancel()
	if err := <-l.done; err != nil {
		p.errs = append(p.errs, fmt.Errorf("--metrics-addr: %w", err))
	}
}

// ServerToken returns the bearer token a server on addr requires: token, else $INFERBENCH_TOKEN.
// A non-loopback address without one is a usage error naming flag (--addr, --metrics-addr).
func ServerToken(addr, token, flag string, env Env) (string, error) {
	if token == "" {
		token, _ = env.Lookup(web.TokenEnv)
	}
	if token == "" && !web.Loopback(addr) {
		return "", usageErr("%s %s is not a loopback address: set a bearer token with %s or $%s", flag, addr, map[string]string{"--addr": "--token", "--metrics-addr": "--metrics-token"}[flag], web.TokenEnv)
	}
	return token, nil
}

// ServeUntilDone serves h on ln until ctx is cancelled, then shuts down gracefully (event streams
// are cut).
func ServeUntilDone(ctx context.Context, ln net.Listener, h http.Handler) error {
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
