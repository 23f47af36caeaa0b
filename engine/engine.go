// Package engine runs scenarios: it opens the subject, hands it to the load driver, starts the
// probes (resource monitors) with the measured window, and turns what the collector gathered into
// a result.Scenario. It writes no files and prints nothing; callers get each scenario's result as
// soon as it is done.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/launch"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// Probe watches a scenario's measured window, e.g. a resource monitor. It is started when the
// measured phase begins and its stop function adds what it saw to the scenario's result.
type Probe func(ctx context.Context, sc *suite.Scenario, s subject.Subject) (stop func(*result.Scenario), err error)

// Listener hears about progress. Every method may be called from the driver's goroutines.
type Listener interface {
	ScenarioStarted(sc *suite.Scenario, index, total int)
	Observed(sc *suite.Scenario, phase load.Phase, done int)
	ScenarioDone(r *result.Scenario)
}

// Engine runs scenarios. Build one with New.
type Engine struct {
	load        load.Config // overrides from the command line
	checker     *suite.Checker
	probes      []Probe
	listeners   listeners
	maxSamples  int
	keep        int
	profileDir  string // --profile: where profiles go ("" none)
	profileN    int
	profileCmds ProfileCommands
	env         []string
	requestLog  string         // folder of per-request logs (requests.go); "" writes none
	serverLogs  string         // folder of server logs (server.go); "" discards them
	server      *launch.Server // the server under test now running, shared by scenarios
	redact      *redact.Redactor
	agent       *Agent // one of several load agents (scaleout.go)
	histograms  bool   // keep full-resolution histograms (scaleout.go)
	started     bool   // the agent's start time has passed
	outputLogs  string // folder of the subjects' output logs (output.go); "" keeps none
	log         *slog.Logger
}

// Option configures an Engine.
type Option func(*Engine)

// WithLoad overrides the definitions' load settings with the fields set in c.
func WithLoad(c load.Config) Option { return func(e *Engine) { e.load = c } }

// WithChecker sets the requirement checker (a default one otherwise).
func WithChecker(c *suite.Checker) Option { return func(e *Engine) { e.checker = c } }

// WithProbe adds a probe run beside every scenario.
func WithProbe(p Probe) Option { return func(e *Engine) { e.probes = append(e.probes, p) } }

// WithListener adds a progress listener; every listener added hears every event.
func WithListener(l Listener) Option {
	return func(e *Engine) { e.listeners = append(e.listeners, l) }
}

// listeners fans events out to several listeners.
type listeners []Listener

func (ls listeners) ScenarioStarted(sc *suite.Scenario, index, total int) {
	for _, l := range ls {
		l.ScenarioStarted(sc, index, total)
	}
}

func (ls listeners) Observed(sc *suite.Scenario, phase load.Phase, done int) {
	for _, l := range ls {
		l.Observed(sc, phase, done)
	}
}

func (ls listeners) ScenarioDone(r *result.Scenario) {
	for _, l := range ls {
		l.ScenarioDone(r)
	}
}

// WithMaxSamples bounds the raw samples held per metric (stats.DefaultMaxSamples otherwise).
func WithMaxSamples(n int) Option { return func(e *Engine) { e.maxSamples = n } }

// WithKeepSamples bounds the raw samples written into results per metric (default 10,000; 0 all).
func WithKeepSamples(n int) Option { return func(e *Engine) { e.keep = n } }

// WithProfile makes every scenario whose subject can profile (subject.Profiler) run n more calls
// under its profiler after the measured iterations, writing the files under dir/SCENARIO/.
func WithProfile(dir string, n int) Option {
	return func(e *Engine) { e.profileDir, e.profileN = dir, max(n, 1) }
}

// WithEnv sets the environment for processes subjects start (the process's own otherwise).
func WithEnv(env []string) Option { return func(e *Engine) { e.env = env } }

// WithLogger sets the log the engine, the load drivers and the subjects write their debug
// records to: what each scenario opens, how its load runs and why it stops.
func WithLogger(l *slog.Logger) Option { return func(e *Engine) { e.log = l } }

// New returns an Engine.
func New(opts ...Option) *Engine {
	e := &Engine{checker: &suite.Checker{}, keep: 10000}
	for _, o := range opts {
		o(e)
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	return e
}

// Run runs the scenarios in order and calls done with each result as it completes (skipped ones
// included). Cancelling ctx stops after the current iteration of the current scenario; that
// scenario's partial result is still passed to done, marked with a warning, and the remaining
// scenarios are not started. Run returns ctx.Err() when it was interrupted.
func (e *Engine) Run(ctx context.Context, scenarios []*suite.Scenario, done func(result.Scenario)) error {
	defer e.Close()
	for i, sc := range scenarios {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		e.listeners.ScenarioStarted(sc, i, len(scenarios))
		r := e.RunScenario(ctx, sc)
		e.listeners.ScenarioDone(&r)
		done(r)
	}
	return ctx.Err()
}

// RunScenario runs one scenario and returns its result; it never panics on a subject's failure.
func (e *Engine) RunScenario(ctx context.Context, sc *suite.Scenario) (r result.Scenario) {
	b := sc.Benchmark
	r = result.Scenario{
		Benchmark: b.Name, Scenario: sc.Name, Category: b.Category, Model: sc.Model(), Tags: b.Tags,
		Source: b.Source(), Subject: b.Kind, Params: maps.Clone(map[string]any(sc.Params)),
		Budgets: b.Budgets, Gate: b.Gate, StartedAt: time.Now(),
	}
	defer e.redactScenario(&r)
	defer func() { result.RankWarnings(r.Warnings) }() // what matters first: expected effects after the alarms
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
	cfg := b.Load.Merge(e.load).WithParams(sc.Params)
	var err error
	if e.agent != nil {
		cfg, err = e.agent.Split(cfg)
	}
	if err := errors.Join(err, cfg.Validate()); err != nil {
		r.Status, r.Error = result.StatusFailed, fmt.Sprintf("%s: load: %v", sc.ID(), err)
		return r
	}
	driver, _ := load.Lookup(cfg)
	kind, ok := subject.Lookup(b.Kind)
	if !ok {
		r.Status, r.Error = result.StatusFailed, fmt.Sprintf("%s: unknown subject kind %q", sc.ID(), b.Kind)
		return r
	}
	env := e.env
	if env == nil {
		env = os.Environ()
	}
	params, err := e.startServer(ctx, sc, &r)
	if err != nil {
		r.Status, r.Error = result.StatusFailed, fmt.Sprintf("%s: %v", sc.ID(), err)
		return r
	}
	log := e.log.With("scenario", sc.ID())
	spec := subject.Spec{
		Benchmark: b.Name, Scenario: sc.Name, Dir: b.Dir, Config: b.Config, Params: params, Env: env,
		Log: log,
	}
	if e.outputLogs != "" {
		name := scenarioFileBase(sc) + ".log"
		out := newOutputLog(filepath.Join(e.outputLogs, name), MaxOutputLog, e.redact)
		spec.Output = out
		// Deferred before the subject's Close, so it runs after it: a worker's last words are in.
		defer func() {
			wrote, err := out.Close()
			if wrote {
				r.Logs = append(r.Logs, filepath.ToSlash(filepath.Join(filepath.Base(e.outputLogs), name)))
			}
			if err != nil {
				r.Warnings = append(r.Warnings, fmt.Sprintf("output log: %v", err))
			}
		}()
	}
	log.Debug("opening subject", "kind", b.Kind, "dir", b.Dir, "config", jsonText(b.Config), "params", jsonText(map[string]any(params)))
	openStart := time.Now()
	subj, err := kind.Open(ctx, spec)
	loadTime := time.Since(openStart)
	if err != nil {
		log.Debug("subject did not open", "kind", b.Kind, "after", loadTime.Round(time.Microsecond), "err", err)
		// A subject may find only when opened that it cannot run here (a worker's framework
		// lacks the variant): that is a skip with its reason, not a failure.
		var skip interface{ SkipReason() string }
		if errors.As(err, &skip) && skip.SkipReason() != "" {
			r.Status, r.SkipReason = result.StatusSkipped, skip.SkipReason()
			return r
		}
		r.Status, r.Error = result.StatusFailed, fmt.Sprintf("%s: open %s subject: %v", sc.ID(), b.Kind, err)
		return r
	}
	log.Debug("subject opened", "kind", b.Kind, "load_time", loadTime.Round(time.Microsecond), "abilities", abilities(subj))
	defer func() {
		if cerr := subj.Close(); cerr != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("closing the subject: %v", cerr))
		}
	}()
	if d, ok := subj.(subject.Describer); ok {
		r.Environment = d.Describe()
	}
	if wr, ok := subj.(subject.Warner); ok {
		r.Warnings = append(r.Warnings, wr.Warnings()...)
	}
	if w := sequentialWarning(subj, cfg); w != "" {
		r.Warnings = append(r.Warnings, w)
	}

	col := newCollector(e.samplesFor(cfg))
	if e.histograms || e.agent != nil {
		col.hists = map[string]*stats.Histogram{}
	}
	var stops []func(*result.Scenario)
	col.onPhase = func(p load.Phase) {
		if p != load.Measure {
			return
		}
		for _, probe := range e.probes {
			stop, err := probe(ctx, sc, subj)
			if err != nil {
				r.Warnings = append(r.Warnings, fmt.Sprintf("monitor: %v", err))
				continue
			}
			stops = append(stops, stop)
		}
	}
	if len(e.listeners) > 0 {
		col.onObserve = func(p load.Phase, n int) { e.listeners.Observed(sc, p, n) }
	}
	var sink load.Sink = col
	if e.requestLog != "" && (cfg.Serving() || b.Kind == "openai") {
		rl, err := openRequestLog(e.requestLog, sc, col)
		if err != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("request log: %v", err))
		} else {
			sink = rl
			defer func() {
				if err := rl.close(); err != nil {
					r.Warnings = append(r.Warnings, err.Error())
				}
			}()
		}
	}
	// Hooks see each call as the subject does (renumbered by agentSubject).
	drive := hooked(subj, e.callHooks(sc, cfg))
	if e.agent != nil {
		drive = agentSubject{drive, e.agent.Index, e.agent.Count}
	}
	derr := e.waitStart(ctx)
	if derr == nil {
		log.Debug("load", "mode", cfg.Mode, "config", jsonText(cfg))
		derr = driver(load.WithLogger(ctx, log), drive, cfg, e.redactSink(sink))
	}
	// Probes stop after the collector has filled the metrics, so that they can relate what they
	// saw to them (energy per item needs the throughput).
	col.fill(&r, e.keep)
	log.Debug("load done", "warmup", r.Iterations.Warmup, "measured", r.Iterations.Measured, "failed", r.Iterations.Failed, "err", derr, "interrupted", ctx.Err() != nil)
	for _, stop := range stops {
		stop(&r)
	}
	if e.profileDir != "" && derr == nil && ctx.Err() == nil {
		e.profile(ctx, sc, cfg, subj, &r)
	}
	setValue(&r, "load_time_ms", ms(loadTime))
	if s, ok := subj.(subject.Setup); ok {
		for k, v := range s.SetupValues() {
			if err := result.CheckValue(k, v); err != nil {
				r.Warnings = append(r.Warnings, "setup figure dropped: "+err.Error())
				continue
			}
			setValue(&r, k, v)
		}
	}
	declare(&r, subj, b.Metrics)
	r.Warnings = append(r.Warnings, warnings(&r, cfg.Serving())...)
	switch {
	case derr != nil:
		r.Status, r.Error = result.StatusFailed, fmt.Sprintf("%s: %v", sc.ID(), derr)
	case r.Iterations.Measured > 0 && col.skips == r.Iterations.Measured:
		// Every call said the scenario cannot run here (a module imported in the benchmark's
		// body is missing): a skip with the reason, as when the subject says so at Open.
		r.Status, r.SkipReason = result.StatusSkipped, col.skip
		r.Metrics, r.Errors = nil, nil
	case r.Iterations.Measured == 0:
		r.Status, r.Error = result.StatusFailed, fmt.Sprintf("%s: no measured iteration", sc.ID())
		if ctx.Err() != nil {
			r.Error += " (interrupted)"
		}
	case float64(r.Iterations.Failed) > cfg.MaxErrorRate*float64(r.Iterations.Measured):
		r.Status = result.StatusFailed
		r.Error = fmt.Sprintf("%s: %d of %d measured iterations failed", sc.ID(), r.Iterations.Failed, r.Iterations.Measured)
		if len(r.Errors) > 0 {
			r.Error += "; first: " + r.Errors[0].Error
		}
	default:
		r.Status = result.StatusOK
	}
	if ctx.Err() != nil {
		r.Warnings = append(r.Warnings, "interrupted: measured fewer iterations than asked")
	}
	return r
}

// warnings are the caveats a reader should see next to the scenario's numbers. Under a serving
// load, request latency varies with each request's output length, so spread and outliers are
// expected there and not warned about.
// ShortCallMS is the median latency below which a high CV and many outliers are expected (a Go
// function of a few hundred nanoseconds) and reported as such rather than as noise.
const ShortCallMS = 0.05

// shortDuration prints a latency in ms with a unit a reader takes in at once (300 ns, 12.5 µs).
func shortDuration(msec float64) string {
	return time.Duration(msec * float64(time.Millisecond)).String()
}

// sequentialWarning says when a load asks for calls in parallel from a subject that makes one at
// a time: the calls queue and the figures are those of one call at a time, not of the
// concurrency asked. A sequential subject times each call from when its turn comes
// (subject.Sequential), so its latency holds no wait: it reads as at concurrency 1.
func sequentialWarning(subj subject.Subject, cfg load.Config) string {
	s, ok := subj.(subject.Sequential)
	if !ok || !cfg.Serving() || (cfg.Concurrency <= 1 && cfg.Mode == "concurrency") {
		return ""
	}
	return fmt.Sprintf("load mode %s over a subject that runs one call at a time (%s): calls wait their turn; latency is each call's own time, without that wait (as at concurrency 1), and throughput is that of calls made one after another, not of several in flight; run several workers behind a server (kind openai) to measure concurrency",
		cfg.Mode, s.OneAtATime())
}

func warnings(r *result.Scenario, serving bool) (w []string) {
	// First tokens read together with the next are warned about by the serving load, which knows
	// what the server sent together (load.CoalescedWarning).
	lat, ok := r.Metrics["latency_ms"]
	if !ok || lat.Summary == nil {
		return nil
	}
	s := lat.Summary
	if s.N < 10 {
		w = append(w, fmt.Sprintf("only %d latency samples: percentiles and comparisons are unreliable below 10", s.N))
	}
	if serving {
		return w
	}
	outliers := s.N >= 20 && float64(s.Outliers) > 0.10*float64(s.N)
	if s.N >= 10 && s.Median < ShortCallMS {
		// Expected, not an alarm: one line, listed after the warnings that matter. Timer
		// resolution, GC pauses and preemption add microseconds to some calls of a few
		// nanoseconds, which puts them far from the median however quiet the machine.
		var what []string
		if s.CV > 0.10 {
			what = append(what, fmt.Sprintf("latency CV %.0f%%", 100*s.CV))
		}
		if outliers {
			what = append(what, fmt.Sprintf("%d outliers in %d latency samples", s.Outliers, s.N))
		}
		if len(what) > 0 {
			defer func() {
				w = append(w, fmt.Sprintf(result.ExpectedPrefix+"%s at a median of %s: calls this short are spread by timer resolution, scheduling and GC pauses; the median is the stable figure to compare", strings.Join(what, " and "), shortDuration(s.Median)))
			}()
		}
		return w
	}
	if s.CV > 0.10 && s.N >= 10 {
		w = append(w, fmt.Sprintf("noisy: latency CV %.0f%% (above 10%%); consider more iterations or a quieter machine", 100*s.CV))
	}
	if outliers {
		w = append(w, fmt.Sprintf("%d outliers in %d latency samples", s.Outliers, s.N))
	}
	return w
}

// ProfileCommands writes files that profile a scenario outside the run into dir — command
// scripts for profilers that must start the process themselves, such as NVIDIA Nsight Systems —
// and returns them; none when it has nothing for the scenario. cfg is the scenario's load.
type ProfileCommands func(sc *suite.Scenario, cfg load.Config, dir string) ([]string, error)

// WithProfileCommands adds f to the profiling pass of WithProfile: its files are listed with the
// profiles.
func WithProfileCommands(f ProfileCommands) Option { return func(e *Engine) { e.profileCmds = f } }

// profile runs the profiling pass of a scenario, after its measured iterations (which the
// profiler never slows) and after its figures are collected.
func (e *Engine) profile(ctx context.Context, sc *suite.Scenario, cfg load.Config, subj subject.Subject, r *result.Scenario) {
	dir := filepath.Join(e.profileDir, scenarioFileBase(sc))
	// Paths relative to the run folder (profileDir's parent), where report.html links them from:
	// the links survive the folder's upload. A subject may return absolute paths under a
	// relative run folder (the worker's), so both sides are made absolute first.
	base, _ := filepath.Abs(filepath.Dir(e.profileDir))
	rel := func(files []string) []string {
		out := make([]string, len(files))
		for i, f := range files {
			out[i] = f
			abs, err := filepath.Abs(f)
			if err != nil {
				continue
			}
			if rf, err := filepath.Rel(base, abs); err == nil && !strings.HasPrefix(rf, "..") {
				out[i] = filepath.ToSlash(rf)
			}
		}
		return out
	}
	var cmds []string
	if e.profileCmds != nil {
		files, err := e.profileCmds(sc, cfg, dir)
		cmds = rel(files)
		if err != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("profile: %v", err))
		}
	}
	if len(cmds) > 0 {
		defer func() {
			r.Profiles = append(r.Profiles, cmds...)
			r.Warnings = append(r.Warnings, fmt.Sprintf(result.ExpectedPrefix+"%s run the scenario again under NVIDIA's profilers, apart from this run; inferbench wrote them and did not run them (they take minutes): sh %s", strings.Join(cmds, ", "), cmds[0]))
		}()
	}
	p, ok := subj.(subject.Profiler)
	if !ok {
		if len(cmds) == 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("profile: the %s subject has no profiler", sc.Benchmark.Kind))
		}
		return
	}
	files, err := p.Profile(ctx, dir, e.profileN)
	r.Profiles = append(r.Profiles, rel(files)...)
	if err != nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("profile: %v", err))
		return
	}
	r.Warnings = append(r.Warnings, fmt.Sprintf(result.ExpectedPrefix+"profiled %d extra calls after the measured iterations (not in the figures): %s", e.profileN, strings.Join(r.Profiles, ", ")))
}
