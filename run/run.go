// Package run owns one invocation of a benchmark run, from the definitions to the verdict. Run
// composes the stages in order, each in its own file:
//
//	select   (select.go)   discover definitions, expand their matrices, filter the scenarios
//	execute  (execute.go)  run each scenario with the engine and its load driver
//	sample   (monitor.go)  monitors beside each measured window; the on/off overhead pass
//	write    (execute.go)  the run folder: run.json after every scenario, run.log, requests/
//	record   (judge.go)    the history store
//	judge    (judge.go)    baseline comparison, budgets, advice, alerts
//	render   (render.go)   the summary, the verdict and advice, report.html, compare.json/md
//
// Around them all, when asked for, the trace (tracing.go): the run's OpenTelemetry spans, opened
// before select and flushed after render.
//
// The command line (`inferbench run`) only turns flags into Options and calls Run; a Go program
// gets the same run, monitors, history and verdict by calling Run itself (docs/library.md).
// Run writes to the writers it is given and never exits.
package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/inferbench/inferbench/alert"
	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/base/logs"
	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"

	// Subject kinds available to definitions.
	_ "github.com/inferbench/inferbench/internal/kind/exec"
	_ "github.com/inferbench/inferbench/internal/kind/gofunc"
	_ "github.com/inferbench/inferbench/internal/kind/mock"
	_ "github.com/inferbench/inferbench/internal/kind/openai"
	_ "github.com/inferbench/inferbench/internal/kind/worker"
)

// Options is everything a run takes. The zero value runs every definition under the working
// directory with monitors, writes benchmark_results/<id>/, records the run in the default store
// and checks the budgets found there; it prints nothing.
//
// Errors about an option name the command-line flag that sets it (e.g. --monitor-interval), since
// that is how most people meet them.
type Options struct {
	Selection Selection // which scenarios run
	// Scaleout makes the run one shard or one load agent of a group (scaleout.go).
	Scaleout Scaleout

	// Load overrides the definitions' load settings with the fields set (the command line's
	// --iterations, --warmup, --min-time, --max-time, --timeout).
	Load load.Config
	// KeepSamples bounds the raw samples written per metric: 0 keeps 10,000, a
	// negative number keeps all.
	KeepSamples int

	Monitor Monitor // resource monitors beside each scenario

	// OutputDir receives a timestamped folder per run ("benchmark_results" when empty; relative
	// to Dir).
	OutputDir    string
	NoRequestLog bool // no requests/<scenario>.jsonl
	NoHTMLReport bool // no report.html

	// Store is the history store's location: a SQLite file, sqlite:PATH or postgres://...; empty
	// is $INFERBENCH_STORE, else the default file under Dir.
	Store   string
	NoStore bool // do not record the run (Baseline needs the store)

	// Baseline names a stored baseline to compare the run with; a regression fails the run
	// (ErrRegression).
	Baseline string
	// Paired, when set, measures each scenario on two sides in this job and judges them instead
	// of a baseline (paired.go): `run --baseline-ref REF`.
	Paired Paired
	// Compare holds the thresholds, the budgets (checked with or without a baseline) and the
	// false discovery rate; a zero Alpha is 0.05.
	Compare compare.Config
	Alerts  []alert.Rule // evaluated after the run; firing ones are posted to the webhook
	// AlertWebhookEnv names the environment variable holding the webhook URL
	// (alert.WebhookEnv when empty).
	AlertWebhookEnv string

	// Observers follow the run as it goes (observer.go): the progress bar, the live view
	// (with Prometheus /metrics), a Go program's OnVerdict. Each takes part in the events
	// whose interfaces it implements.
	Observers []Observer
	// Secrets are values hidden wherever the run writes (the live view's bearer token), besides
	// those it learns itself (secret flags in Args, URL passwords, secret environment variables).
	Secrets []string
	// SecretParams are parameter names whose values are secrets (--secret-param): masked whole
	// in each scenario's parameters and learnt, so that an echo of one is masked too. A
	// parameter is masked otherwise only where its value holds a secret (one the
	// run knows, a URL's password, a bearer token).
	SecretParams []string

	// Format of the summary written to Stdout: "text", the table (the default; "table" is read
	// as it), "json" or "none".
	Format string
	// Stdout receives the summary, the verdict and advice; Stderr warnings. Nil discards.
	Stdout, Stderr io.Writer
	// Profile is the number of calls each scenario runs under its subject's profiler after its
	// measured iterations (--profile); 0 profiles nothing. Files go to the run folder's profiles/.
	Profile int
	// Measure overrides every definition's measure: "instructions" counts each iteration's
	// instructions under valgrind's callgrind (--measure instructions); "" keeps the definitions'.
	Measure string
	// Log receives the run's log records besides run.log (which always gets them), e.g. a text
	// handler on stderr when no progress bar is shown. LogLevel is the lowest level logged
	// (run.log always keeps info and above).
	Log      slog.Handler
	LogLevel slog.Level
	// Tracing exports the run as OpenTelemetry traces (tracing.go); the zero value exports only
	// when the OTEL_EXPORTER_OTLP_* environment names an endpoint.
	Tracing Tracing

	// Dir is the working directory relative paths resolve against ("" for the process's).
	Dir string
	// Env is the environment for the processes subjects start and for the variables the run reads
	// (INFERBENCH_PYTHON, the webhook, GITHUB_STEP_SUMMARY); nil is the process's.
	Env []string
	// Args is the command line, recorded with the run; Version the inferbench version recorded in
	// its environment.
	Args    []string
	Version string
}

// Monitor configures the resource monitors.
type Monitor struct {
	Off      bool          // sample nothing
	Interval time.Duration // sampling period; 100 ms when 0
	// Overhead runs every measured scenario again without monitors and reports the difference.
	Overhead bool
	Grid     result.Grid // carbon intensity and PUE for co2e_g; result.DefaultGrid when zero
}

// Errors Run returns, besides I/O errors. Use errors.Is: a run may end with several. They are
// the sentinels every layer below marks its errors with (set in init), so that errors.Is finds
// them wherever an error was made.
var (
	// ErrUsage marks bad options or definitions: nothing was run.
	ErrUsage error
	// ErrInterrupted: ctx was cancelled; run.json holds what was measured, marked partial.
	ErrInterrupted error
	// ErrFailed: at least one scenario failed.
	ErrFailed error
	// ErrRegression: the comparison with the baseline found a regression, or a budget was
	// exceeded. The error is a *VerdictError carrying the verdict.
	ErrRegression error
)

func init() {
	ErrUsage, ErrInterrupted, ErrFailed, ErrRegression = exit.ErrUsage, exit.ErrInterrupted, exit.ErrFailed, exit.ErrRegression
}

// VerdictError is the error of a run whose verdict failed it: a regression against the baseline
// or an exceeded budget.
type VerdictError struct{ Verdict *Verdict }

func (e *VerdictError) Error() string {
	if e.Verdict.Against != "" {
		return report.Outcome(e.Verdict.Compare) + " against " + e.Verdict.Compare.Old.ID + ", measured in this job"
	}
	return report.Outcome(e.Verdict.Compare)
}

// Is makes errors.Is(err, ErrRegression) hold.
func (e *VerdictError) Is(target error) bool { return target == ErrRegression }

// Run runs the selected scenarios and everything around them, stage by stage, and returns the
// run (also when it fails: what was measured is kept) with an error that joins every problem:
// ErrUsage (then the run is nil), ErrInterrupted, ErrFailed, a *VerdictError, or I/O errors of
// the stages after execute, which never stop the stages after them.
func Run(ctx context.Context, o Options) (r *result.Run, err error) {
	p, err := newPipeline(o)
	if err != nil {
		return nil, err
	}
	tr, err := p.startTrace(ctx) // trace: the run's OTLP spans, ended with whatever Run returns
	if err != nil {
		return nil, err
	}
	defer func() { tr.finish(ctx, r) }()
	p.startLog()
	scenarios, err := Select(p.o.Selection, p.env) // select
	p.logDiscovery(ctx, scenarios, err)
	if err != nil {
		return nil, err
	}
	scenarios, sh, err := selectShard(ctx, p.o, scenarios) // select: this shard's part (scaleout.go)
	if err != nil {
		return nil, err
	}
	p.learnSecrets(scenarios)
	var pairedEnv func(*result.Run)
	if p.o.Paired != nil { // select: the other side of each scenario (a worktree at the ref)
		defer func() {
			if cerr := p.o.Paired.Close(); cerr != nil {
				err = errors.Join(err, p.red.Error(cerr))
			}
		}()
		name, value, secrets, perr := p.o.Paired.Pair(ctx, scenarios)
		if perr != nil {
			return nil, p.red.Error(perr)
		}
		p.red.Add(secrets...)
		pairedEnv = func(r *result.Run) {
			if r.Environment == nil {
				r.Environment = map[string]any{}
			}
			r.Environment[name] = value
		}
	}
	for _, sc := range scenarios {
		p.selected = append(p.selected, sc.ID())
	}
	w, err := p.create(ctx, scenarios) // write: the run folder, run.log, a first run.json
	if err != nil {
		return nil, err
	}
	defer w.close()
	if pairedEnv != nil {
		pairedEnv(w.run)
	}
	if err := p.startPart(ctx, w, sh); err != nil { // scale-out: record the part, meet the agents
		return nil, err
	}
	mon := p.startMonitors(ctx) // sample: the monitors' sources, open for the whole run
	defer mon.Close()
	obs := observers(p.o.Observers)
	if err := obs.start(ctx, p, w); err != nil { // observers: the run folder is ready
		return nil, err
	}

	if p.o.Paired != nil {
		r = p.executePaired(ctx, w, scenarios, mon) // execute + sample: both sides of each scenario
	} else {
		r = p.execute(ctx, w, scenarios, mon) // execute + sample; write after each scenario
	}
	overhead := p.overhead(ctx, mon, r) // sample: the on/off pass of Monitor.Overhead
	// The stages after execute run on a context that is not the cancelled one, so that an
	// interrupted run is still written, recorded and judged.
	fctx := context.WithoutCancel(ctx)
	w.finish(r)                    // write: the final run.json, latest
	st := p.record(fctx, w.dir, r) // record: the history store
	v := p.judge(fctx, st, r)      // judge: baseline, budgets, advice, alerts
	p.alt = w.alt
	obs.judged(v)
	p.render(fctx, w.dir, r, v, overhead) // render: summary, verdict, reports, alerts posted
	if st != nil {
		st.Close()
	}
	obs.finish(fctx, p, r)
	p.errs = append(p.errs, w.err)
	return r, p.result(r, w.dir, v)
}

// pipeline is one run in progress: its options with the defaults applied, and the errors of the
// stages so far.
type pipeline struct {
	o        Options
	selected []string // the ids of the scenarios the run was to run, in order
	env      Env
	errs     []error
	// red hides the run's secrets in everything it writes: it learns them here, where they
	// enter (flags, URLs, the environment, subject configurations), and the engine runs what
	// servers and processes send back through it (redact.go).
	red        *redact.Redactor
	alt        string          // where the whole run went when its folder could not take it (execute.go)
	engineOpts []engine.Option // added by stages before execute (scaleout.go)
	// log is the run's log before its folder exists (debuglog.go): the console and early, whose
	// records create writes first into run.log.
	log   *slog.Logger
	early *logs.Held
}

func newPipeline(o Options) (*pipeline, error) {
	switch o.Format {
	case "", "table":
		o.Format = "text"
	case "text", "json", "none":
	default:
		return nil, exit.Usagef("--format %q: want text, json or none", o.Format)
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.OutputDir == "" {
		o.OutputDir = "benchmark_results"
	}
	if o.Compare.Alpha == 0 {
		o.Compare.Alpha = 0.05
	}
	if o.AlertWebhookEnv == "" {
		o.AlertWebhookEnv = alert.WebhookEnv
	}
	if err := (load.Config{}).Merge(o.Load).Validate(); err != nil {
		return nil, exit.Usagef("%v", err)
	}
	if err := o.Monitor.validate(); err != nil {
		return nil, err
	}
	if !(o.Compare.Alpha > 0 && o.Compare.Alpha < 1) { // NaN too
		return nil, exit.Usagef("--alpha %v: want a rate between 0 and 1, e.g. 0.05", o.Compare.Alpha)
	}
	if o.NoStore && o.Baseline != "" {
		return nil, exit.Usagef("--baseline needs the history store: drop --no-store")
	}
	if err := o.Scaleout.validate(); err != nil {
		return nil, err
	}
	if err := o.checkPaired(); err != nil {
		return nil, err
	}
	if err := checkObservers(o.Observers); err != nil {
		return nil, err
	}
	red := newRedactor(&o)
	env := Env{Dir: o.Dir, Vars: o.Env}
	return &pipeline{o: o, env: env, red: red}, nil
}

// result is the error Run returns: the stages' errors, then why the run failed.
func (p *pipeline) result(r *result.Run, dir string, v *Verdict) error {
	errs := p.errs
	switch {
	case r.Partial:
		errs = append(errs, exit.Mark(ErrInterrupted, fmt.Sprintf("interrupted: partial results in %s%s", dir, notStarted(p.selected, r))))
	case r.Summary.Failed > 0:
		errs = append(errs, exit.Mark(ErrFailed, fmt.Sprintf("%d of %d scenarios failed (details in %s)", r.Summary.Failed, r.Summary.Total, filepath.Join(dir, result.LogFile))))
	case r.Summary.Total > 0 && r.Summary.Skipped == r.Summary.Total:
		errs = append(errs, exit.Mark(ErrFailed, "nothing was measured: "+allSkipped(r)))
	}
	if v != nil && v.Compare != nil && v.Compare.NoEvidence != "" { // a verdict needs evidence
		errs = append(errs, exit.Mark(ErrFailed, fmt.Sprintf("%s: nothing comparable: %s", v.comparedWith(), v.Compare.NoEvidence)))
	}
	if v != nil && v.Compare != nil && v.Compare.NoEvidence == "" && v.Compare.Failed() {
		errs = append(errs, &VerdictError{v})
	} else if v != nil && v.Compare != nil && v.Compare.NoEvidence == "" && v.Compare.Undecided() != "" {
		errs = append(errs, exit.Mark(ErrFailed, fmt.Sprintf("%s: %s", v.comparedWith(), v.Compare.Undecided())))
	}
	for i := range errs {
		errs[i] = p.red.Error(errs[i])
	}
	return errors.Join(errs...)
}

// notStarted names the selected scenarios an interrupted run has no result of: "; 3 scenarios
// not started: a/x, a/y, b/default" (the first ten, then how many more), or "".
func notStarted(selected []string, r *result.Run) string {
	done := make(map[string]bool, len(r.Scenarios))
	for i := range r.Scenarios {
		done[r.Scenarios[i].ID()] = true
	}
	var left []string
	for _, id := range selected {
		if !done[id] {
			left = append(left, id)
		}
	}
	if len(left) == 0 {
		return ""
	}
	shown := left[:min(len(left), 10)]
	more := ""
	if len(left) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(left)-len(shown))
	}
	return fmt.Sprintf("; %d scenarios not started: %s%s", len(left), strings.Join(shown, ", "), more)
}

// allSkipped says why a run whose every scenario was skipped measured nothing: its reasons, the
// commonest first, with their counts.
func allSkipped(r *result.Run) string {
	count := map[string]int{}
	var reasons []string
	for _, s := range r.Scenarios {
		if count[s.SkipReason] == 0 {
			reasons = append(reasons, s.SkipReason)
		}
		count[s.SkipReason]++
	}
	slices.SortStableFunc(reasons, func(a, b string) int { return count[b] - count[a] })
	msg := fmt.Sprintf("all %d scenarios were skipped", r.Summary.Total)
	for i, why := range reasons {
		if i == 3 {
			msg += fmt.Sprintf("; %d other reasons", len(reasons)-3)
			break
		}
		msg += fmt.Sprintf("; %d: %s", count[why], why)
	}
	return msg
}

// Note: the stages were once extensions that registered themselves from init() with a Start and a
// Finish method; their order was the order of their file names, and a library caller got none of
// them. Here each is a plain call in Run, in the order it runs.
