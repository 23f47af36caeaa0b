package ab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/base/gitref"
	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/internal/stage/sample"
	"github.com/inferbench/inferbench/internal/stage/secrets"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/suite"
)

// RefOptions are `inferbench run --baseline-ref REF`: the run's options, and the ref whose code
// is the baseline.
type RefOptions struct {
	// Ref is a branch, tag or commit of the repository holding the working directory.
	Ref string
	// Run is the run's options: the selection, the load overrides (--iterations asks for a fixed
	// design of that many calls a side, --max-time bounds a scenario's pairs, --warmup the
	// warm-up), the thresholds (Compare.Thresholds; DefaultThreshold where none is set, not
	// compare's), Compare.Strict (an unknown answer fails the run, as a definition's strict:
	// true fails its own), and everything else as for any run.
	Run run.Options
	// Alpha bounds the rate at which the run calls a change that is not there, across its
	// scenarios (each A/B's level is Alpha over their number) and the looks of each; 0 is 0.01.
	Alpha float64
	// Progress, when set, receives a line per block, rewritten with \r.
	Progress io.Writer
}

// SectionBaselineRef is the scenario's section of run.json that holds the A/B against the ref.
const SectionBaselineRef = "baseline_ref"

// RefSection is the section of a paired run's scenario that holds the other side: "baseline_ref"
// (the ref, the commit, the ref's calls; the working tree's are the scenario's metrics) or "ab"
// (A's calls; B's are the scenario's metrics, and Ref and Commit are empty), and the paired
// verdict.
type RefSection struct {
	Ref      string        `json:"ref,omitempty"`
	Commit   string        `json:"commit,omitempty"`
	Baseline result.Metric `json:"baseline"` // the compared metric's calls at the ref, or of A
	Result   *Result       `json:"ab"`
	// CPU is the same blocks' test of cpu_ms, and BaselineCPU the ref's calls, when the subject
	// reports its CPU time per call.
	CPU         *Result        `json:"cpu_ab,omitempty"`
	BaselineCPU *result.Metric `json:"baseline_cpu,omitempty"`
	// Counted is the ref's scenario counted under callgrind (--measure instructions), compared
	// with the working tree's as compare compares two runs (counted.go).
	Counted *result.Scenario `json:"counted,omitempty"`
	// BaselineMetrics are the ref's resource figures (cpu_s, cpu_pct, peak_rss_mb, energy_j, ...)
	// and BaselineResources its extra.resources, sampled during its own blocks (refsample.go);
	// the working tree's are the scenario's.
	BaselineMetrics   map[string]result.Metric `json:"baseline_metrics,omitempty"`
	BaselineResources *result.Resources        `json:"baseline_resources,omitempty"`
}

// RefRun runs the selected scenarios of the working tree and the same scenarios at o.Ref (a
// temporary worktree; Go functions built there), each pair interleaved in ABBA blocks until its
// sequential answer (Run), or counted on both sides in instruction mode: a run.Run whose execute
// and judge stages are the pairs' (run.Paired). The run is written, recorded and rendered as any
// run is (run.json, whose scenarios carry the working tree's calls and a "baseline_ref" section;
// compare.json and compare.md), and the worktree removed, also when ctx is cancelled. The error
// is run.Run's: run.ErrUsage (a ref that does not resolve, a scenario absent at the ref),
// run.ErrFailed (a scenario could not be measured on either side), run.ErrInterrupted, or
// run.ErrRegression (exit 3).
func RefRun(ctx context.Context, o RefOptions) (*result.Run, error) {
	opts := o.Run
	opts.Paired = NewRef(o)
	return run.Run(ctx, opts)
}

// Ref is the run.Paired of `run --baseline-ref REF`: each scenario at REF (A) beside the working
// tree's (B).
type Ref struct {
	o      RefOptions // o.Alpha is each scenario's, once Pair has adjusted it across them
	env    run.Env
	red    *redact.Redactor
	wt     *gitref.Worktree
	at     string
	pairs  map[string]pairing
	counts bool    // some scenario is counted (instruction mode)
	alpha  float64 // the run's level, which Pair shares out across the scenarios
	paired int     // the scenarios measured on both sides
	procs  *procSides
	tmp    string
	mon    *sample.Monitors // the run's monitors, when they sample the sides (SampleWith)
}

// NewRef returns the paired stages of a run against o.Ref; o.Run is the run's options.
func NewRef(o RefOptions) *Ref {
	vars := o.Run.Env
	if vars == nil {
		vars = os.Environ()
	}
	red := redact.New()
	red.Env(vars)
	red.Add(o.Run.Secrets...)
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = 0.01
	}
	return &Ref{o: o, env: run.Env{Dir: o.Run.Dir, Vars: vars}, red: red}
}

var _ run.Paired = (*Ref)(nil)

// Pair opens the worktree at the ref, finds each scenario there, and builds the ref's Go program
// when a scenario is a Go function.
func (f *Ref) Pair(ctx context.Context, scs []*suite.Scenario) (string, any, []string, error) {
	sel := f.o.Run.Selection
	f.red.Add(secrets.Of(f.env.Vars, scs)...)
	wt, err := gitref.Open(ctx, f.env.WorkDir(), f.o.Ref)
	if err != nil {
		return "", nil, nil, exit.UsageError(err)
	}
	f.wt = wt
	f.at = fmt.Sprintf("%s (%s)", f.o.Ref, wt.Short())
	carried, err := carryDefinitions(sel.Paths, f.env, wt)
	if err != nil {
		return "", nil, nil, err
	}
	pairs, refEnv, err := pairScenarios(sel, f.env, wt, scs, f.at)
	if err != nil {
		return "", nil, nil, err
	}
	refSecrets := secrets.Of(f.env.Vars, refScenarios(pairs))
	f.red.Add(refSecrets...)
	if f.tmp, err = os.MkdirTemp("", "inferbench-ab-"); err != nil {
		return "", nil, nil, err
	}
	f.pairs = map[string]pairing{}
	measured := 0
	for _, p := range pairs {
		f.pairs[p.b.ID()] = p
		if p.skip == "" {
			measured++
		}
		f.counts = f.counts || counted(f.o, p)
		if p.skip == "" && p.b.Benchmark.Kind == "gofunc" && f.procs == nil {
			if f.procs, err = buildSides(ctx, wt, f.tmp, f.env, refEnv, sel, f.o.Run.Load); err != nil {
				return "", nil, nil, err
			}
		}
	}
	// Each scenario's A/B runs at the run's level over the number measured, so that the run
	// calls a change that is not there at most at that rate (Bonferroni).
	f.alpha, f.paired = f.o.Alpha, measured
	f.o.Alpha /= float64(max(1, measured))
	env := map[string]any{"ref": f.o.Ref, "commit": wt.Commit, "head": wt.Head, "dirty": wt.Dirty}
	if len(carried) > 0 {
		env["carried"] = carried // definitions the ref lacks, run there as the working tree has them
	}
	return SectionBaselineRef, env, append(secrets.Of(f.env.Vars, scs), refSecrets...), nil
}

// Measure measures one scenario on both sides: interleaved, or counted in instruction mode.
func (f *Ref) Measure(ctx context.Context, s *suite.Scenario, dir string) (result.Scenario, error) {
	p, ok := f.pairs[s.ID()]
	if !ok {
		return result.Scenario{}, fmt.Errorf("%s: not paired with %s", s.ID(), f.at)
	}
	if counted(f.o, p) {
		return countPair(ctx, f.o, p, f.wt, f.procs, f.env, f.red, dir)
	}
	sc, _, err := measurePair(ctx, f.o, p, f.wt, f.procs, f.env, f.red, f.sampling(p.b.Benchmark.Kind))
	return sc, err
}

// Judge compares each scenario's two sides: the A/B's answers, and the counts compared as
// compare compares two counted runs.
func (f *Ref) Judge(r *result.Run) *compare.Report {
	o := f.o
	o.Alpha = f.alpha
	rep := refReport(r, f.wt, o)
	rep.Correction = fmt.Sprintf("each scenario's A/B at %.2g%%: Bonferroni over %d scenarios and each one's looks", 100*f.o.Alpha, f.paired)
	if f.counts {
		rep = mergeReports(rep, countReport(r, f.wt, o))
	}
	return rep
}

// Against names the ref and how it was measured.
func (f *Ref) Against() string {
	if f.counts {
		return f.at + ", both sides counted under callgrind in this job (exact counts)"
	}
	return f.at + ", run interleaved with it in this job (ABBA blocks, sequential paired test)"
}

// Close removes the worktree and the Go programs built at the ref.
func (f *Ref) Close() error {
	var err error
	if f.wt != nil {
		err = f.wt.Remove()
	}
	if f.tmp != "" {
		err = errors.Join(err, os.RemoveAll(f.tmp))
	}
	return err
}

// pairing is one scenario of the working tree and its counterpart at the ref.
type pairing struct {
	b, a *suite.Scenario // b the working tree's, a the ref's
	skip string
}

// pairScenarios finds each selected scenario of the working tree at the ref: the definitions
// discovered at the same paths in the worktree, the quick modes' benchmarks run from the worktree.
func pairScenarios(sel run.Selection, env run.Env, wt *gitref.Worktree, scs []*suite.Scenario, at string) ([]pairing, run.Env, error) {
	dir, err := wt.Map(env.WorkDir())
	if err != nil {
		return nil, env, exit.UsageError(fmt.Errorf("--baseline-ref %s: the working directory: %w", at, err))
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		wd, _ := filepath.Abs(env.WorkDir())
		return nil, env, exit.UsageError(fmt.Errorf("--baseline-ref %s: the working directory %s is not in the tree at %s (run from a folder both have)", at, wd, at))
	}
	refEnv := run.Env{Dir: dir, Vars: env.Vars}
	refSel := sel
	refSel.Paths = nil
	for _, p := range sel.Paths {
		if filepath.IsAbs(p) {
			if p, err = wt.Map(p); err != nil {
				return nil, env, exit.UsageError(fmt.Errorf("--baseline-ref %s: %w", at, err))
			}
		}
		refSel.Paths = append(refSel.Paths, p)
	}
	if sel.Benchmarks != nil {
		refSel.Benchmarks = nil
		for _, b := range sel.Benchmarks {
			c := *b
			if c.Dir != "" {
				if c.Dir, err = wt.Map(env.Path(c.Dir)); err != nil {
					return nil, env, exit.UsageError(fmt.Errorf("--baseline-ref %s: benchmark %s: %w", at, b.Name, err))
				}
			}
			refSel.Benchmarks = append(refSel.Benchmarks, &c)
		}
	}
	refs, err := run.Select(refSel, refEnv)
	if err != nil {
		return nil, env, fmt.Errorf("the definitions at %s: %w", at, err)
	}
	byID := map[string]*suite.Scenario{}
	for _, s := range refs {
		byID[s.ID()] = s
	}
	chk := checker(sel, env)
	var out []pairing
	var missing []string
	for _, s := range scs {
		p := pairing{b: s, a: byID[s.ID()]}
		switch {
		case s.Skip != "":
			p.skip = s.Skip
		case chk != nil && chk.Check(s) != "":
			p.skip = chk.Check(s)
		case s.Benchmark.Server != nil:
			return nil, env, exit.UsageError(fmt.Errorf("%s: its definition starts a server, which --baseline-ref does not do (start both builds' servers and compare them with `inferbench ab openai:URL1 openai:URL2`)", s.ID()))
		case p.a == nil:
			missing = append(missing, s.ID())
		}
		out = append(out, p)
	}
	if len(missing) > 0 {
		return nil, env, exit.UsageError(fmt.Errorf("--baseline-ref %s: scenario %s is not at %s, so it has no baseline (select the scenarios both have with --include or --exclude)", at, strings.Join(missing, ", "), at))
	}
	return out, refEnv, nil
}

func refScenarios(ps []pairing) []*suite.Scenario {
	var out []*suite.Scenario
	for _, p := range ps {
		if p.a != nil {
			out = append(out, p.a)
		}
	}
	return out
}

// design is the fixed A/B of one scenario whose measured calls were asked for (--iterations):
// that many calls of each side in pairs of blocks, at most 20 pairs and at least 6.
func design(cfg load.Config) (pairs, block int) {
	n := cfg.Measurement()
	pairs = min(20, max(6, n))
	block = max(1, (n+pairs/2)/pairs)
	return pairs, block
}

// pairedOptions are the A/B of one scenario of benchmark bench: sequential, blocks of about
// 200 ms, at the level the run's scenarios share (Alpha, adjusted across them), the threshold
// of metric; a fixed design when --iterations asked for a number of calls, and --max-time (else
// the definition's max_time) the time budget.
func (o RefOptions) pairedOptions(bench, metric string, cfg load.Config) Options {
	opts := Options{Metric: metric, Alpha: o.Alpha}
	if o.Run.Load.MeasurementIterations != nil {
		opts.Pairs, opts.BlockCalls = design(cfg)
	}
	if cfg.MaxTime > 0 { // --max-time, else the definition's max_time
		opts.MaxTime = cfg.MaxTime
	}
	th := o.threshold(bench, metric)
	opts.Threshold = &th
	return opts
}

// threshold is metric's threshold for bench: the one --threshold or a thresholds file gives,
// else the paired design's DefaultThreshold.
func (o RefOptions) threshold(bench, metric string) float64 {
	if th, set := o.Run.Compare.Thresholds.Lookup(bench, metric); set {
		return th
	}
	return DefaultThreshold
}

// cpuMetric is the per-call CPU time the iteration subjects report beside latency_ms
// (compare.CPUMetric): compared like latency_ms from the same blocks when both sides report it.
const cpuMetric = compare.CPUMetric

// measurePair runs one scenario's A/B: the ref's side is A, the working tree's B. The latency_ms
// test is Run's; the same blocks' cpu_ms, when the subject reports it per call, get a test of
// their own (Analyze), in the section's CPU.
func measurePair(ctx context.Context, o RefOptions, p pairing, wt *gitref.Worktree, procs *procSides, env run.Env, red *redact.Redactor, rs *sideSampling) (result.Scenario, *Result, error) {
	s, b := p.b, p.b.Benchmark
	sc := pairScenario(s, p.skip)
	if p.skip != "" {
		return sc, nil, nil
	}
	cfg := b.Load.Merge(o.Run.Load).WithParams(s.Params)
	if cfg.Mode != "" && cfg.Mode != "single" {
		sc.Warnings = append(sc.Warnings, fmt.Sprintf("load mode %q: --baseline-ref calls one at a time, in blocks", cfg.Mode))
	}
	opts := o.pairedOptions(b.Name, "latency_ms", cfg)
	warm := cfg.Warmup()
	k := &blocksKept{}
	var sampler Sampler
	if b.Kind == "gofunc" {
		sampler = procs.sampler(s, warm, k.keep, rs.block)
		opts.Warmup = -1 // each block's process warms up (and sizes its iterations) itself
	} else {
		spec := Spec{Env: env.Vars}
		subs, _, err := openSides(ctx, spec, [2]*Variant{{Name: s.ID() + " at " + wt.Ref, Scenario: p.a}, {Name: s.ID(), Scenario: s}})
		if err != nil {
			return sc, nil, err
		}
		defer subs.close()
		opts.Restart, opts.Window = subs.restart, rs.window(&subs.s)
		sampler = subjectsWith(&subs.s, cfg, opts.Metric, k.keep)
		if opts.Warmup = warm; warm == 0 {
			opts.Warmup = -1
		}
	}
	cpuTh := o.threshold(b.Name, cpuMetric)
	// A CPU-bound scenario is judged on its CPU time too: the A/B goes on until both answers
	// are decided.
	opts.Also = func(blocks []Block, looks int) bool {
		c := cpuOf(blocks, k.others, opts, cpuTh, looks)
		return c == nil || c.Answer != AnswerUnknown
	}
	progress := func(bl Block) {
		rs.measured(bl)
		if o.Progress != nil {
			fmt.Fprint(o.Progress, red.String(fmt.Sprintf("\r%s: pair %d, %s: median %.4g ms   ", s.ID(), bl.Pair+1, map[string]string{"A": wt.Ref, "B": "working tree"}[bl.Variant], bl.Median)))
		}
	}
	res, err := k.run(ctx, wt.Ref+" ("+wt.Short()+")", "working tree", sampler, opts, progress)
	if o.Progress != nil {
		fmt.Fprintln(o.Progress)
	}
	if sec := k.finish(&sc, res, "latency_ms", warm); sec != nil {
		sec.Ref, sec.Commit = wt.Ref, wt.Commit
		sec.CPU, sec.BaselineCPU, sc.Metrics = cpuTest(res, k.others, opts, cpuTh, sc.Metrics)
		rs.attach(&sc, sec, res.Blocks, k.others)
		putSection(&sc, SectionBaselineRef, sec)
	}
	if err != nil {
		return sc, nil, err
	}
	return sc, res, nil
}

// cpuBlocks are blocks with the medians of their calls' cpu_ms (others: each block's figures, in
// order), and each side's cpu_ms calls; ok is false unless every block reported it for every
// call.
func cpuBlocks(blocks []Block, others []map[string][]float64) (cb []Block, calls [2][]float64, ok bool) {
	if len(others) < len(blocks) || len(blocks) == 0 {
		return nil, calls, false
	}
	cb = make([]Block, len(blocks))
	for i, bl := range blocks {
		xs := others[i][cpuMetric]
		if len(xs) == 0 || len(xs) != bl.N {
			return nil, calls, false
		}
		bl.Median = median(xs)
		cb[i] = bl
		calls[bl.Side()] = append(calls[bl.Side()], xs...)
	}
	return cb, calls, true
}

// cpuOf judges the cpu_ms of blocks as Analyze judges latency_ms, with looks looks, when the
// scenario is CPU-bound so far (its median CPU time per call over its fastest block reaches
// compare.CPUBoundRatio) and every block reported it for every call; else nil.
func cpuOf(blocks []Block, others []map[string][]float64, opts Options, threshold float64, looks int) *Result {
	cb, calls, ok := cpuBlocks(blocks, others)
	if !ok {
		return nil
	}
	fastest := math.Inf(1)
	for _, bl := range blocks {
		fastest = min(fastest, bl.Median)
	}
	if !(fastest > 0) || median(append(calls[0], calls[1]...))/fastest < compare.CPUBoundRatio {
		return nil
	}
	opts.Metric, opts.Better, opts.Threshold, opts.Progress, opts.Looks = cpuMetric, "", &threshold, nil, looks
	r, err := Analyze(cb, opts)
	if err != nil {
		return nil
	}
	return r
}

// cpuTest tests the cpu_ms of the blocks of res (others: each block's figures, in order) as Run
// tests latency_ms, when every block reported it for every call. It returns the test, the ref's
// calls, and metrics with the working tree's cpu_ms added.
func cpuTest(res *Result, others []map[string][]float64, opts Options, threshold float64, metrics map[string]result.Metric) (*Result, *result.Metric, map[string]result.Metric) {
	blocks, calls, ok := cpuBlocks(res.Blocks, others)
	if !ok {
		return nil, nil, metrics // not reported, or not with every call
	}
	opts.Metric, opts.Better, opts.Threshold, opts.Progress, opts.Looks = cpuMetric, "", &threshold, nil, res.Looks
	r, err := Analyze(blocks, opts)
	if err != nil {
		return nil, nil, metrics
	}
	r.A, r.B = res.A, res.B
	r.Stopped = res.Stopped
	base := result.SampleMetric(cpuMetric, calls[0])
	if metrics == nil {
		metrics = map[string]result.Metric{}
	}
	metrics[cpuMetric] = result.SampleMetric(cpuMetric, calls[1])
	return r, &base, metrics
}
