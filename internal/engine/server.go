package engine

import (
	"context"
	"maps"
	"path/filepath"
	"time"

	"github.com/inferbench/inferbench/internal/serverproc"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// WithServerLogs captures the output of servers started for definitions' `server:` blocks into
// dir/<benchmark>__<scenario>.log.
func WithServerLogs(dir string) Option { return func(e *Engine) { e.serverLogs = dir } }

// startServer makes sure the scenario's server is running: the one already running when its
// rendered command is the same, else a new one (stopping the previous). It returns the params the
// subject is opened with: the scenario's, plus "port" when the server drew one.
func (e *Engine) startServer(ctx context.Context, sc *suite.Scenario, r *result.Scenario) (subject.Params, error) {
	b := sc.Benchmark
	params := sc.Params
	if b.Server == nil {
		e.stopServer()
		return params, nil
	}
	logPath := ""
	if e.serverLogs != "" {
		logPath = filepath.Join(e.serverLogs, scenarioFileBase(sc)+".log")
	}
	plan, err := serverproc.Render(*b.Server, params, b.Dir, logPath)
	if err != nil {
		return nil, err
	}
	plan.Redact(e.redact)
	info := &result.Server{Command: plan.String()}
	if plan.Same(e.server) {
		info.Reused = true
	} else {
		e.stopServer()
		start := time.Now()
		srv, err := plan.Start(ctx, e.env)
		if err != nil {
			return nil, err
		}
		e.server = srv
		info.StartS = time.Since(start).Seconds()
	}
	info.Log = e.server.LogPath()
	r.Extra.Server = info
	if port := e.server.Port(); port != 0 {
		if _, has := params["port"]; !has {
			params = maps.Clone(params)
			if params == nil {
				params = subject.Params{}
			}
			params["port"] = port
		}
	}
	return params, nil
}

// stopServer stops the running server, if any.
func (e *Engine) stopServer() {
	if e.server != nil {
		e.server.Stop()
		e.server = nil
	}
}

// Close stops a server left running by RunScenario; Run calls it when it returns.
func (e *Engine) Close() error {
	e.stopServer()
	return nil
}
