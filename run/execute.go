package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/internal/base/logs"
	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/internal/stage/recovery"
	"github.com/inferbench/inferbench/internal/stage/sample"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// The execute and write stages: the engine runs the scenarios one by one; each finished scenario
// is appended to the run folder's journal and run.json is rewritten whenever that costs at most a
// tenth of the time since the last rewrite (after every scenario unless they are many and fast),
// so an interrupted or killed run keeps what was measured: result.Load reads the journal back.

// writer is the run folder.
type writer struct {
	root, dir string
	logFile   *os.File
	log       *slog.Logger
	mu        sync.Mutex
	run       *result.Run
	err       error            // the first failed write
	tmp       string           // where run.json goes when the folder cannot take it ($TMPDIR)
	alt       string           // the folder under tmp that holds the whole run, when it went there
	gpus      int              // NVIDIA GPUs of the machine (sysinfo)
	red       *redact.Redactor // the run's: every string of what is written passes through it
	journal   *recovery.Journal
	saved     time.Time     // the last rewrite of run.json
	saveCost  time.Duration // what it took
}

// rewriteShare bounds the time the write stage spends rewriting run.json while a run lasts: a
// rewrite waits until the time since the last one is this many times what the last one took.
const rewriteShare = 10

// create makes the run folder, opens run.log and writes a first run.json with no scenario.
func (p *pipeline) create(ctx context.Context, scenarios []*suite.Scenario) (*writer, error) {
	w := &writer{root: p.env.Path(p.o.OutputDir), tmp: os.TempDir(), red: p.red}
	if t, ok := p.env.Lookup("TMPDIR"); ok && t != "" {
		w.tmp = t
	}
	started := time.Now()
	dir, err := recovery.NewDir(w.root, started)
	if err != nil {
		return nil, err
	}
	w.dir = dir
	if w.logFile, err = os.Create(filepath.Join(dir, result.LogFile)); err != nil {
		return nil, err
	}
	recovery.Lock(w.logFile) // held while the run lasts: a later run tells it from a killed one
	file := slog.NewTextHandler(w.logFile, &slog.HandlerOptions{Level: p.fileLevel()})
	if p.early != nil {
		p.early.Replay(ctx, file) // what select logged, redacted on its way in
	}
	handlers := logs.Tee{file}
	if p.o.Log != nil {
		handlers = append(handlers, p.o.Log)
	}
	w.log = slog.New(redact.Handler(handlers, p.red)) // every record, console and run.log, redacted
	sel := p.o.Selection
	info := sample.Sysinfo(ctx, p.env.Dir, p.env.Python(), p.o.Version)
	w.gpus = len(info.GPUs)
	w.run = &result.Run{
		Schema: result.Schema, ID: filepath.Base(dir), Partial: true, StartedAt: started,
		Environment: info.Map(),
		Config:      result.Config{Args: p.o.Args, Dir: p.o.Dir, Filters: sel.describe(), Set: sel.setStrings()},
		Scenarios:   []result.Scenario{},
	}
	redact.Deep(p.red, w.run) // a --set value equal to a secret ($HF_TOKEN's) in config.set
	if err := w.save(); err != nil {
		w.close()
		return nil, err
	}
	if w.journal, err = recovery.OpenJournal(dir); err != nil {
		w.log.Warn("no journal: run.json is rewritten after every scenario", "err", err)
	}
	w.log.Info("run started", "dir", dir, "scenarios", len(scenarios))
	return w, nil
}

func (w *writer) close() {
	if w.journal != nil {
		w.journal.Close()
	}
	w.logFile.Close()
}

// save rewrites run.json and summary.csv with the scenarios so far, and times it.
func (w *writer) save() error {
	start := time.Now()
	err := result.Save(w.dir, w.run)
	w.saved, w.saveCost = time.Now(), time.Since(start)
	return err
}

// saveElsewhere writes run.json and summary.csv into a new folder named after the run under tmp
// (the temporary directory, usually another file system than the results), and returns it.
func saveElsewhere(r *result.Run, tmp string) (string, error) {
	dir, err := os.MkdirTemp(tmp, "inferbench-"+r.ID+"-")
	if err != nil {
		return "", err
	}
	if err := result.Save(dir, r); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// add keeps a scenario's result: it appends it to the journal, and rewrites run.json when that
// is cheap enough (rewriteShare) or there is no journal.
func (w *writer) add(sc result.Scenario) {
	w.mu.Lock()
	defer w.mu.Unlock()
	redact.Deep(w.red, &sc) // every string, whichever field holds a value equal to a secret
	w.run.Scenarios = append(w.run.Scenarios, sc)
	w.run.Tally()
	if w.journal != nil {
		if err := w.journal.Add(&sc); err != nil {
			// A line may be half written (a full disk): append nothing after it, and rewrite
			// run.json after every scenario from now on, as without a journal.
			w.log.Warn("journal: rewriting run.json after every scenario from now on", "err", err)
			w.journal.Close()
			w.journal = nil
		}
	}
	var err error
	if w.journal == nil || time.Since(w.saved) >= rewriteShare*w.saveCost {
		err = w.save()
	}
	if err != nil && w.err == nil {
		w.err = err
		w.log.Error("saving results", "err", err)
	}
}

// finish writes the final run.json and points latest at the folder. When the folder cannot take
// it (a full disk, a read-only file), the whole run is written to a folder under the temporary
// directory instead and the error names both: a measured scenario is never dropped.
func (w *writer) finish(r *result.Run) {
	redact.Deep(w.red, r)
	if err := result.Save(w.dir, r); err != nil {
		w.log.Error("saving results", "err", err)
		alt, aerr := saveElsewhere(r, w.tmp)
		if aerr != nil {
			w.err = fmt.Errorf("%w; the run could not be written elsewhere either (%v): its %d scenarios are only in the history store, if it is recorded there", err, aerr, len(r.Scenarios))
			return
		}
		w.alt = alt
		w.err = fmt.Errorf("%w; the whole run (%d scenarios) was written to %s instead", err, len(r.Scenarios), filepath.Join(alt, result.RunFile))
		w.log.Error("results written elsewhere", "dir", alt)
		return
	}
	w.err = nil // the final write holds everything the failed one lacked
	if w.journal != nil {
		w.journal.Close()
		w.journal = nil
	}
	if err := os.Remove(filepath.Join(w.dir, result.JournalFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		w.log.Warn("could not remove the journal", "err", err)
	}
	if err := recovery.LinkLatest(w.root, w.dir); err != nil {
		w.log.Warn("could not link latest", "err", err)
	}
	w.log.Info("run finished", "dir", w.dir, "ok", r.Summary.Succeeded, "failed", r.Summary.Failed, "skipped", r.Summary.Skipped, "partial", r.Partial)
}

// execute runs the scenarios (the execute stage) with the monitors beside them (the sample
// stage) and the observers following them, and returns the run, marked partial when ctx was
// cancelled.
func (p *pipeline) execute(ctx context.Context, w *writer, scenarios []*suite.Scenario, mon *sample.Monitors) *result.Run {
	logHooks, _ := engineHooks(logObserver{w.log})
	opts := []engine.Option{
		engine.WithLoad(p.o.Load), engine.WithChecker(checker(p.o.Selection, p.env)),
		engine.WithHooks(logHooks), engine.WithKeepSamples(p.o.KeepSamples),
		engine.WithEnv(p.o.Env), engine.WithServerLogs(filepath.Join(w.dir, "servers")),
		engine.WithRedactor(p.red), engine.WithLogger(w.log),
		engine.WithOutputLogs(filepath.Join(w.dir, "logs")),
		engine.WithMeasure(p.o.Measure), engine.WithCountProfiles(filepath.Join(w.dir, "profiles")),
	}
	if !p.o.NoRequestLog {
		opts = append(opts, engine.WithRequestLog(filepath.Join(w.dir, "requests")))
	}
	obs := observers(p.o.Observers)
	opts = append(opts, obs.options()...)
	opts = append(opts, p.engineOpts...)
	opts = append(opts, mon.Options()...)
	if p.o.Profile > 0 {
		opts = append(opts, engine.WithProfile(filepath.Join(w.dir, "profiles"), p.o.Profile))
		if g := newGPUProfiler(p, w.gpus); g != nil {
			opts = append(opts, engine.WithProfileCommands(g))
		}
	}
	runErr := engine.New(opts...).Run(ctx, scenarios, w.add)
	obs.scenariosDone()
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.run
	r.Partial = errors.Is(runErr, context.Canceled) || ctx.Err() != nil
	r.FinishedAt = time.Now()
	r.Tally()
	return r
}

// logObserver writes a line to the run's log as each scenario starts and ends.
type logObserver struct{ log *slog.Logger }

func (l logObserver) ScenarioStarted(sc *suite.Scenario, index, total int) {
	l.log.Info("scenario started", "scenario", sc.ID(), "index", index+1, "of", total)
	l.log.Debug("scenario definition", "scenario", sc.ID(), "source", sc.Benchmark.Source(),
		"subject", sc.Benchmark.Kind, "model", sc.Model(), "category", sc.Benchmark.Category,
		"params", fmt.Sprint(map[string]any(sc.Params)), "load", jsonText(sc.Benchmark.Load))
}

func (l logObserver) ScenarioFinished(r *result.Scenario) {
	attrs := []any{"scenario", r.ID(), "status", r.Status, "duration_s", fmt.Sprintf("%.2f", r.DurationS)}
	if lat := r.Metrics["latency_ms"].Summary; lat != nil {
		attrs = append(attrs, "n", lat.N, "p50_ms", fmt.Sprintf("%.3f", lat.Median), "p99_ms", fmt.Sprintf("%.3f", lat.P99))
	}
	switch r.Status {
	case result.StatusSkipped:
		attrs = append(attrs, "reason", r.SkipReason)
	case result.StatusFailed:
		attrs = append(attrs, "error", r.Error)
	}
	l.log.Info("scenario done", attrs...)
	if len(r.Environment) > 0 {
		l.log.Debug("subject described itself", "scenario", r.ID(), "environment", fmt.Sprint(r.Environment))
	}
	for _, w := range r.Warnings {
		l.log.Debug("scenario warning", "scenario", r.ID(), "warning", w)
	}
}

var (
	_ ScenarioStarter  = logObserver{}
	_ ScenarioFinisher = logObserver{}
)

// jsonText is v as compact JSON for a log line ("" when it cannot be encoded).
func jsonText(v any) string {
	b, err := finite.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
