package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/inferbench/inferbench/internal/base/logs"
	"github.com/inferbench/inferbench/internal/base/unit"
	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// RunScenario runs one scenario and returns its result; it never panics on a subject's failure.
// It runs in three stages, as run.Run does: open (the load, the server, the subject), drive (the
// load driver over the subject, into the collector) and finish (the figures, the probes, the
// profile and the status).
func (e *Engine) RunScenario(ctx context.Context, sc *suite.Scenario) (r result.Scenario) {
	r = newResult(sc)
	defer e.redactScenario(&r)
	defer func() { rankWarnings(r.Warnings) }() // what matters first: expected effects after the alarms
	if why := e.checker.Check(sc); why != "" {
		r.Status, r.SkipReason = result.StatusSkipped, why
		return r
	}
	defer func() {
		if p := recover(); p != nil {
			r.Status, r.Error = result.StatusFailed, fmt.Sprintf("%s: panic: %v", sc.ID(), p)
		}
		r.DurationS = time.Since(r.StartedAt).Seconds()
	}()
	s := &scenario{sc: sc}
	defer s.close(&r)
	if !e.open(ctx, s, &r) {
		return r
	}
	derr := e.drive(ctx, s, &r)
	e.finish(ctx, s, derr, &r)
	return r
}

// scenario is one scenario on its way through RunScenario's stages: what open made ready for
// drive and finish.
type scenario struct {
	sc       *suite.Scenario
	cfg      load.Config
	driver   load.Driver
	subj     subject.Subject
	log      *slog.Logger
	loadTime time.Duration // the subject's Open
	// inProcess: the subject's calls run in this process (subject.Kind.InProcess).
	inProcess bool
	col       *collector
	stops     []func(*result.Scenario) // the probes started with the measured phase
	// closers run once the scenario is finished, the last added first (the subject's Close
	// before its output log's).
	closers []func(*result.Scenario)
}

func (s *scenario) close(r *result.Scenario) {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i](r)
	}
}

func newResult(sc *suite.Scenario) result.Scenario {
	b := sc.Benchmark
	return result.Scenario{
		Benchmark: b.Name, Scenario: sc.Name, Category: b.Category, Model: sc.Model(), Tags: b.Tags,
		Source: b.Source(), Subject: b.Kind, Params: maps.Clone(map[string]any(sc.Params)),
		Budgets: b.Budgets, Gate: b.Gate, Strict: b.Strict, StartedAt: time.Now(),
	}
}

// failed marks r failed, its error the scenario's id and the message, and returns false (open's
// answer for a scenario that cannot run).
func failed(r *result.Scenario, sc *suite.Scenario, format string, args ...any) bool {
	r.Status, r.Error = result.StatusFailed, sc.ID()+": "+fmt.Sprintf(format, args...)
	return false
}

// open settles the scenario's load, starts its server and opens its subject. It returns false
// with r failed or skipped when the scenario cannot run.
func (e *Engine) open(ctx context.Context, s *scenario, r *result.Scenario) bool {
	sc, b := s.sc, s.sc.Benchmark
	cfg := b.Load.Merge(e.load).WithParams(sc.Params)
	var err error
	if e.agent != nil {
		cfg, err = e.agent.Split(cfg)
	}
	if err := errors.Join(err, cfg.Validate()); err != nil {
		return failed(r, sc, "load: %v", err)
	}
	s.cfg = cfg
	s.driver, _ = load.Lookup(cfg)
	kind, ok := subject.Lookup(b.Kind)
	if !ok {
		return failed(r, sc, "unknown subject kind %q", b.Kind)
	}
	spec, err := e.subjectSpec(ctx, s, r)
	if err != nil {
		return failed(r, sc, "%v", err)
	}
	if why := e.countable(sc, kind, &spec); why != "" {
		return failed(r, sc, "%s", why)
	}
	s.log.Debug("opening subject", "kind", b.Kind, "dir", b.Dir, "config", jsonText(b.Config), "params", jsonText(map[string]any(spec.Params)))
	openStart := time.Now()
	s.inProcess = kind.InProcess
	subj, err := kind.Open(ctx, spec)
	s.loadTime = time.Since(openStart)
	if err != nil {
		s.log.Debug("subject did not open", "kind", b.Kind, "after", s.loadTime.Round(time.Microsecond), "err", err)
		// A subject may find only when opened that it cannot run here (a worker's framework
		// lacks the variant): that is a skip with its reason, not a failure.
		var skip interface{ SkipReason() string }
		if errors.As(err, &skip) && skip.SkipReason() != "" {
			r.Status, r.SkipReason = result.StatusSkipped, skip.SkipReason()
			return false
		}
		return failed(r, sc, "open %s subject: %v", b.Kind, err)
	}
	s.log.Debug("subject opened", "kind", b.Kind, "load_time", s.loadTime.Round(time.Microsecond), "abilities", abilities(subj))
	s.subj = subj
	s.closers = append(s.closers, func(r *result.Scenario) {
		if cerr := subj.Close(); cerr != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("closing the subject: %v", cerr))
		}
	})
	if d, ok := subj.(subject.Describer); ok {
		r.Environment = d.Describe()
	}
	if wr, ok := subj.(subject.Warner); ok {
		r.Warnings = append(r.Warnings, wr.Warnings()...)
	}
	if w := sequentialWarning(subj, cfg); w != "" {
		r.Warnings = append(r.Warnings, w)
	}
	return true
}

// subjectSpec starts the scenario's server (its parameters may name the server's port) and
// returns what the subject opens with, its output log included.
func (e *Engine) subjectSpec(ctx context.Context, s *scenario, r *result.Scenario) (subject.Spec, error) {
	sc, b := s.sc, s.sc.Benchmark
	env := e.env
	if env == nil {
		env = os.Environ()
	}
	params, err := e.startServer(ctx, sc, r)
	if err != nil {
		return subject.Spec{}, err
	}
	s.log = e.log.With("scenario", sc.ID())
	spec := subject.Spec{
		Benchmark: b.Name, Scenario: sc.Name, Dir: b.Dir, Config: b.Config, Params: params, Env: env,
		Log: s.log, Timeout: s.cfg.Timeout,
	}
	if e.outputLogs != "" {
		name := scenarioFileBase(sc) + ".log"
		out := newOutputLog(filepath.Join(e.outputLogs, name), maxOutputLog, e.redact)
		spec.Output = out
		// Added before the subject's Close, so it runs after it: a worker's last words are in.
		s.closers = append(s.closers, func(r *result.Scenario) {
			wrote, err := out.Close()
			if wrote {
				r.Logs = append(r.Logs, filepath.ToSlash(filepath.Join(filepath.Base(e.outputLogs), name)))
			}
			if err != nil {
				r.Warnings = append(r.Warnings, fmt.Sprintf("output log: %v", err))
			}
		})
	}
	return spec, nil
}

// drive runs the load driver over the subject into the collector, and returns the driver's error.
func (e *Engine) drive(ctx context.Context, s *scenario, r *result.Scenario) error {
	sc, cfg := s.sc, s.cfg
	s.col = newCollector(e.samplesFor(cfg), cfg)
	if e.agent != nil {
		s.col.figs.KeepHistograms()
	}
	s.col.onPhase = func(p load.Phase) {
		if p == load.Measure {
			e.hooks.measureStarted(sc)
			s.stops = append(s.stops, e.startProbes(ctx, sc, s.subj, r)...)
		}
	}
	if e.hooks.counting() {
		s.col.onObserve = func(p load.Phase, n int) { e.hooks.callCounted(sc, p, n) }
	}
	chain := e.sinks(s, r)
	// Hooks see each call as the subject does (renumbered by agentSubject).
	drive := hooked(s.subj, e.callHooks(sc, cfg))
	if e.agent != nil {
		drive = agentSubject{drive, e.agent.Index, e.agent.Count}
	}
	if err := e.waitStart(ctx); err != nil {
		return err
	}
	s.log.Debug("load", "mode", cfg.Mode, "config", jsonText(cfg))
	defer clientGC(s.inProcess)()
	return s.driver(logs.WithLogger(ctx, s.log), drive, cfg, chain)
}

// startProbes starts every probe with the measured phase; one that fails to start is a warning.
func (e *Engine) startProbes(ctx context.Context, sc *suite.Scenario, subj subject.Subject, r *result.Scenario) []func(*result.Scenario) {
	var stops []func(*result.Scenario)
	for _, probe := range e.probes {
		stop, err := probe(ctx, sc, subj)
		if err != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("monitor: %v", err))
			continue
		}
		stops = append(stops, stop)
	}
	return stops
}

// sink is what each stage of the engine's sink chain is: a load.Sink that takes a serving
// driver's reports and keeps the figures it reads its verdicts from (the collector's).
type sink interface {
	load.Sink
	load.Reporter
	figures.Keeper
}

// sinks builds the chain the driver's calls go through: redacted (redact.go), logged
// (requests.go), collected.
func (e *Engine) sinks(s *scenario, r *result.Scenario) sink {
	var next sink = s.col
	if e.requestLog != "" && (s.cfg.Serving() || s.sc.Benchmark.Kind == "openai") {
		rl, err := openRequestLog(e.requestLog, s.sc, next)
		if err != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("request log: %v", err))
		} else {
			next = rl
			s.closers = append(s.closers, func(r *result.Scenario) {
				if err := rl.close(); err != nil {
					r.Warnings = append(r.Warnings, err.Error())
				}
			})
		}
	}
	return e.redactSink(next)
}

// finish turns what the collector gathered into r's figures, stops the probes, profiles, and
// settles the scenario's status from the driver's error derr.
func (e *Engine) finish(ctx context.Context, s *scenario, derr error, r *result.Scenario) {
	sc, cfg, subj := s.sc, s.cfg, s.subj
	// Probes stop after the collector has filled the metrics, so that they can relate what they
	// saw to them (energy per item needs the throughput).
	s.col.fill(r, e.keep)
	s.log.Debug("load done", "warmup", r.Iterations.Warmup, "measured", r.Iterations.Measured, "failed", r.Iterations.Failed, "err", derr, "interrupted", ctx.Err() != nil)
	for _, stop := range s.stops {
		stop(r)
	}
	if e.profileDir != "" && derr == nil && ctx.Err() == nil {
		e.profile(ctx, sc, cfg, subj, r)
	}
	setValue(r, "load_time_ms", unit.MS(s.loadTime))
	if su, ok := subj.(subject.Setup); ok {
		for k, v := range su.SetupValues() {
			if err := result.CheckValue(k, v); err != nil {
				r.Warnings = append(r.Warnings, "setup figure dropped: "+err.Error())
				continue
			}
			setValue(r, k, v)
		}
	}
	declare(r, subj, sc.Benchmark.Metrics)
	e.counted(subj, r)
	r.Warnings = append(r.Warnings, warnings(r, cfg.Serving())...)
	s.certify(r)
	e.settle(ctx, s, derr, r)
	if ctx.Err() != nil {
		r.Warnings = append(r.Warnings, "interrupted: measured fewer iterations than asked")
	}
}

// settle sets r's status: failed by the driver's error, skipped when every call said the scenario
// cannot run here, failed without a measured call or with too many failed ones, else ok.
func (e *Engine) settle(ctx context.Context, s *scenario, derr error, r *result.Scenario) {
	sc, it := s.sc, r.Iterations
	switch {
	case derr != nil:
		failed(r, sc, "%v", derr)
	case it.Measured > 0 && s.col.skips == it.Measured:
		// Every call said the scenario cannot run here (a module imported in the benchmark's
		// body is missing): a skip with the reason, as when the subject says so at Open.
		r.Status, r.SkipReason = result.StatusSkipped, s.col.skip
		r.Metrics, r.Errors = nil, nil
	case it.Measured == 0:
		failed(r, sc, "no measured iteration")
		if ctx.Err() != nil {
			r.Error += " (interrupted)"
		}
	case float64(it.Failed) > s.cfg.MaxErrorRate*float64(it.Measured):
		failed(r, sc, "%d of %d measured iterations failed", it.Failed, it.Measured)
		if len(r.Errors) > 0 {
			r.Error += "; first: " + r.Errors[0].Error
		}
	default:
		r.Status = result.StatusOK
	}
}

// rankWarnings orders warnings by severity, keeping their order within a severity: the alarms
// first, the expected effects (result.IsExpected) last.
func rankWarnings(ws []string) {
	slices.SortStableFunc(ws, func(a, b string) int {
		return cmpBool(result.IsExpected(a), result.IsExpected(b))
	})
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
