// Package engine runs scenarios: it opens the subject, hands it to the load driver, starts the
// probes (resource monitors) with the measured window, and turns what the collector gathered into
// a result.Scenario. It writes no files and prints nothing; callers get each scenario's result as
// soon as it is done.
package engine

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/serverproc"
	"github.com/inferbench/inferbench/load"

	// The built-in load modes register their drivers with load.RegisterDriver.
	_ "github.com/inferbench/inferbench/internal/drive"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// Probe watches a scenario's measured window, e.g. a resource monitor. It is started when the
// measured phase begins and its stop function adds what it saw to the scenario's result.
type Probe func(ctx context.Context, sc *suite.Scenario, s subject.Subject) (stop func(*result.Scenario), err error)

// Engine runs scenarios. Build one with New.
type Engine struct {
	load        load.Config // overrides from the command line
	checker     *suite.Checker
	probes      []Probe
	hooks       hooks
	maxSamples  int
	keep        int
	profileDir  string // --profile: where profiles go ("" none)
	profileN    int
	profileCmds ProfileCommands
	env         []string
	requestLog  string             // folder of per-request logs (requests.go); "" writes none
	serverLogs  string             // folder of server logs (server.go); "" discards them
	server      *serverproc.Server // the server under test now running, shared by scenarios
	redact      Redactor
	agent       *Agent // one of several load agents (scaleout.go)
	started     bool   // the agent's start time has passed
	outputLogs  string // folder of the subjects' output logs (output.go); "" keeps none
	measure     string // --measure: overrides the definitions' measure: (counted.go)
	countDir    string // where counted subjects keep their callgrind files (counted.go)
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

// WithMaxSamples bounds the raw samples held per metric (stats.NewDist's default, 2^20, otherwise).
func WithMaxSamples(n int) Option { return func(e *Engine) { e.maxSamples = n } }

// DefaultKeepSamples is the raw samples written into results per metric unless WithKeepSamples
// says otherwise.
const DefaultKeepSamples = 10000

// WithKeepSamples bounds the raw samples written into results per metric: 0 keeps
// DefaultKeepSamples, a negative number keeps all (Thin), as every KeepSamples option does.
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
	e := &Engine{checker: &suite.Checker{}, keep: DefaultKeepSamples}
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
		e.hooks.scenarioStarted(sc, i, len(scenarios))
		r := e.RunScenario(ctx, sc)
		e.hooks.scenarioFinished(&r)
		done(r)
	}
	return ctx.Err()
}

// shortCallMS is the median latency below which a high CV and many outliers are expected (a Go
// function of a few hundred nanoseconds) and reported as such rather than as noise.
const shortCallMS = 0.05

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

// warnings are the caveats a reader should see next to the scenario's numbers. Under a serving
// load, request latency varies with each request's output length, so spread and outliers are
// expected there and not warned about.
func warnings(r *result.Scenario, serving bool) (w []string) {
	// First tokens read together with the next are warned about by the serving load, which knows
	// what the server sent together (figures.CoalescedWarning).
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
	if s.N >= 10 && s.Median < shortCallMS {
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
	r.Warnings = append(r.Warnings, fmt.Sprintf(result.ExpectedPrefix+"profiled extra calls after the measured iterations, in chunks of at least %d (not in the figures): %s", e.profileN, strings.Join(r.Profiles, ", ")))
}
