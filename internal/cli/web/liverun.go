package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// LiveRun serves /metrics and the live view of one run while it lasts (`inferbench run
// --metrics-addr`). It is a run.Observer: started with the run folder (run.RunStarter), told of
// each measured window (MeasureStarted marks the scenario being measured) and given each scenario as
// it is done, finished with the run (run.RunFinisher): what it hears goes to the server's view,
// the observer that `inferbench serve` feeds from a run folder (WatchResults).
//
// Note: the live view used to re-read the run folder's run.json every 250 ms; an observer hears
// each scenario once, when it is done, and reads no file.
type LiveRun struct {
	Addr   string        // host:port
	Token  string        // bearer token clients must send ("" on loopback only; see ServerToken)
	Linger time.Duration // keep serving this long after the run, for a last scrape
	Log    io.Writer     // where the addresses are announced (nil: nowhere)

	srv    *Server
	view   view // the live view and /metrics of srv
	cancel context.CancelFunc
	done   chan error
}

// RunStarted listens on Addr and serves until RunFinished.
func (l *LiveRun) RunStarted(ctx context.Context, dir string) error {
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return fmt.Errorf("--metrics-addr %s: %w", l.Addr, err)
	}
	l.srv = New(nil, WithToken(l.Token))
	l.view = view{l.srv.Hub(), l.srv.Metrics()}
	_ = l.view.RunStarted(ctx, dir)
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.cancel = cancel
	l.done = make(chan error, 1)
	go func() { l.done <- ServeUntilDone(sctx, ln, l.srv) }()
	if l.Log != nil {
		fmt.Fprintf(l.Log, "inferbench: live metrics on http://%s/metrics, live view on http://%s/live\n", ln.Addr(), ln.Addr())
	}
	return nil
}

// MeasureStarted marks the scenario whose measured window just opened.
func (l *LiveRun) MeasureStarted(sc *suite.Scenario) { l.view.MeasureStarted(sc) }

// ScenarioFinished publishes a finished scenario in the live view and /metrics.
func (l *LiveRun) ScenarioFinished(r *result.Scenario) { l.view.ScenarioFinished(r) }

// RunFinished publishes the finished run, serves it Linger longer, and stops.
func (l *LiveRun) RunFinished(ctx context.Context, r *result.Run) error {
	_ = l.view.RunFinished(ctx, r)
	if l.Linger > 0 {
		select {
		case <-time.After(l.Linger):
		case <-ctx.Done():
		}
	}
	l.cancel()
	if err := <-l.done; err != nil {
		return fmt.Errorf("--metrics-addr: %w", err)
	}
	return nil
}

// ServerToken returns the bearer token a server on addr requires: token, else $INFERBENCH_TOKEN
// (read with lookup). A non-loopback address without one is an error naming flag (--addr,
// --metrics-addr) and the flag that sets the token.
func ServerToken(addr, token, flag string, lookup func(string) (string, bool)) (string, error) {
	if token == "" {
		token, _ = lookup(TokenEnv)
	}
	if token == "" && !Loopback(addr) {
		return "", fmt.Errorf("%s %s is not a loopback address: set a bearer token with %s or $%s", flag, addr, map[string]string{"--addr": "--token", "--metrics-addr": "--metrics-token"}[flag], TokenEnv)
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
