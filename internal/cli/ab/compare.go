package ab

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/internal/stage/sample"
	"github.com/inferbench/inferbench/internal/stage/secrets"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// CompareOptions are an interleaved A/B of two variants on this machine: `inferbench ab`.
type CompareOptions struct {
	A, B    string  // the variants: BENCHMARK/SCENARIO, exec:COMMAND or openai:URL
	Options Options // pairs, blocks, warm-up, metric and its direction, alpha, threshold, max time
	// Run is the run's options: the run folder (OutputDir), the store (Store, NoStore), the
	// summary (Format, Stdout, Stderr), Compare.Strict (an unknown answer fails the run), the
	// working directory and environment (Dir, Env) and the command line (Args). Its
	// Selection finds definition variants: its Paths and Set (parameter overrides); a mock
	// variant named here runs.
	Run         run.Options
	ExecMetrics bool   // exec: variants print a JSON object of metrics on their last stdout line
	Model       string // openai: variants ask for this model
	// Progress, when set, receives a line of progress per block, rewritten with \r.
	Progress io.Writer
}

// Compare resolves the two variants and runs them as a run.Run whose execute and judge stages
// are the A/B's (Variants): B is the side under test, the run's one scenario, with A's calls
// and the A/B in its "ab" section; the run is written, recorded and rendered as any run is. The
// error is run.Run's: run.ErrUsage for bad options or variants (nothing written),
// run.ErrRegression when B regressed against A (or, with Run.Compare.Strict, the answer is
// unknown), run.ErrFailed when the A/B could not be run.
// Secrets (a URL's password, a definition's header values, secret environment variables) are
// redacted from the result, what it writes and the error, as in a run.
func Compare(ctx context.Context, o CompareOptions) (*result.Run, error) {
	v, err := NewVariants(o)
	if err != nil {
		return nil, err
	}
	opts := o.Run
	opts.Paired, opts.Selection = v, v.sel
	return run.Run(ctx, opts)
}

// SectionAB is the section of run.json's scenario (B) that holds A's calls and the A/B
// (a RefSection without ref and commit), and of its environment that names the variants.
const SectionAB = "ab"

// Variants is the run.Paired of `inferbench ab A B`: variant A beside variant B, the run's
// scenario.
type Variants struct {
	o       CompareOptions
	spec    Spec
	vs      [2]*Variant
	names   [2]string // the variants' names, redacted
	red     *redact.Redactor
	secrets []string      // those the variants' definitions hold
	sel     run.Selection // the run's: B's scenario alone
	mon     *sample.Monitors
}

// SampleWith makes the run's monitors sample each variant during its own blocks, as a run
// against a ref samples its sides (refsample.go).
func (v *Variants) SampleWith(m *sample.Monitors) { v.mon = m }

var _ run.Paired = (*Variants)(nil)

// NewVariants resolves o.A and o.B (a usage error when either cannot be), and checks the
// A/B's options.
func NewVariants(o CompareOptions) (*Variants, error) {
	e := run.Env{Dir: o.Run.Dir, Vars: o.Run.Env}
	if e.Vars == nil {
		e.Vars = os.Environ()
	}
	red := redact.New(o.Run.Secrets...)
	red.Env(e.Vars)
	v, err := newVariants(o, e, red)
	return v, red.Error(err)
}

func newVariants(o CompareOptions, e run.Env, red *redact.Redactor) (*Variants, error) {
	opts := o.Options
	if (opts.Pairs != 0 && opts.Pairs < 3) || opts.Pairs < 0 || opts.BlockCalls < 0 {
		return nil, exit.UsageError(fmt.Errorf("--pairs %d --block-calls %d: want at least 3 pairs (0: as many as the answer needs) and 0 or more calls per block (0: blocks of about 200 ms)", opts.Pairs, opts.BlockCalls))
	}
	sel := o.Run.Selection
	sel.EnableMock = true // a variant is named: a mock one is asked for
	set, err := overrides(sel.Set)
	if err != nil {
		return nil, err
	}
	spec := Spec{
		Benchmarks:  func() ([]*suite.Benchmark, error) { return run.Discover(sel, e) },
		Set:         set,
		Check:       checker(sel, e).Check,
		Dir:         e.WorkDir(),
		Env:         e.Vars,
		ExecMetrics: o.ExecMetrics,
		Model:       o.Model,
	}
	v := &Variants{o: o, spec: spec, red: red}
	for i, name := range []string{o.A, o.B} {
		if v.vs[i], err = spec.Resolve(name); err != nil {
			return nil, exit.UsageError(err)
		}
	}
	v.secrets = secrets.Of(e.Vars, []*suite.Scenario{v.vs[0].Scenario, v.vs[1].Scenario})
	red.Add(v.secrets...)
	v.names = [2]string{red.String(o.A), red.String(o.B)}
	b := v.vs[1].Scenario
	v.sel = run.Selection{Benchmarks: []*suite.Benchmark{b.Benchmark}, EnableMock: true,
		Filter: suite.Filter{Include: []string{globQuote(b.ID())}}}
	if !strings.HasPrefix(o.B, "exec:") && !strings.HasPrefix(o.B, "openai:") {
		v.sel.Set = sel.Set // B is a scenario of a definition: its matrix expanded as Resolve did
	}
	return v, nil
}

// overrides parses --set's key=value pairs.
func overrides(kvs []string) (map[string]any, error) {
	set := map[string]any{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, exit.UsageError(fmt.Errorf("--set %q: want key=value", kv))
		}
		set[k] = suite.ParseValue(v)
	}
	return set, nil
}

// Pair names the variants in the run's environment ("ab": a, b, metric).
func (v *Variants) Pair(_ context.Context, scs []*suite.Scenario) (string, any, []string, error) {
	if len(scs) != 1 {
		return "", nil, nil, fmt.Errorf("ab: %d scenarios selected for B (%s), want its one", len(scs), v.names[1])
	}
	m := v.o.Options.Metric
	if m == "" {
		m = "latency_ms"
	}
	env := map[string]any{"a": v.names[0], "b": v.names[1], "metric": m}
	return SectionAB, env, v.secrets, nil
}

// Measure opens both variants and runs the A/B: B's calls are the scenario's metric, A's and
// the A/B its "ab" section.
func (v *Variants) Measure(ctx context.Context, s *suite.Scenario, _ string) (result.Scenario, error) {
	sc := pairScenario(s, "")
	subs, cfg, err := openSides(ctx, v.spec, v.vs)
	if err != nil {
		return sc, err
	}
	defer subs.close()
	opts := v.o.Options
	opts.Restart = subs.restart
	if opts.Metric == "" {
		opts.Metric = "latency_ms"
	}
	rs := &sideSampling{sides: v.mon.Sides(), by: sample.ByHarness}
	opts.Window = rs.window(&subs.s)
	progress := func(bl Block) {
		rs.measured(bl)
		if v.o.Progress != nil {
			fmt.Fprint(v.o.Progress, v.red.String(fmt.Sprintf("\rab: pair %d/%d, block %s: median %.4g", bl.Pair+1, opts.Pairs, bl.Variant, bl.Median)))
		}
	}
	k := &blocksKept{}
	res, err := k.run(ctx, v.names[0], v.names[1], subjectsWith(&subs.s, cfg, opts.Metric, k.keep), opts, progress)
	if v.o.Progress != nil {
		fmt.Fprintln(v.o.Progress)
	}
	if res != nil {
		for i, w := range res.Warnings {
			res.Warnings[i] = v.red.String(w)
		}
	}
	if sec := k.finish(&sc, res, opts.Metric, opts.Warmup); sec != nil {
		rs.attach(&sc, sec, res.Blocks, k.others)
		putSection(&sc, SectionAB, sec)
	}
	return sc, v.red.Error(err)
}

// Judge is the A/B's verdict as a comparison of A (old) with B (new): its compared metric gates.
func (v *Variants) Judge(r *result.Run) *compare.Report {
	cfg := v.o.Run.Compare
	m := v.o.Options.Metric
	if m == "" {
		m = "latency_ms"
	}
	cfg.Gate = append(cfg.Gate, m) // the metric the user compared: what the A/B is for
	old := compare.RunRef{ID: v.names[0], Label: "A"}
	nw := compare.RunRef{ID: r.ID, Label: "B: " + v.names[1], StartedAt: r.StartedAt}
	return pairedReport(r, SectionAB, old, nw, v.o.Options.Alpha, cfg)
}

// Against names A and how it was measured.
func (v *Variants) Against() string {
	return "A (" + v.names[0] + "), run interleaved with B in this job (ABBA blocks, sequential paired test)"
}

// Close does nothing: each Measure closes the subjects it opened.
func (v *Variants) Close() error { return nil }

// sides are the two variants' open subjects, relaunched in turn by a sequential A/B.
type sides struct {
	s    [2]subject.Subject
	vs   [2]*Variant
	spec Spec
}

func openSides(ctx context.Context, spec Spec, vs [2]*Variant) (*sides, load.Config, error) {
	ss := &sides{vs: vs, spec: spec}
	var cfg load.Config
	for i, v := range vs {
		s, c, err := v.Open(ctx, spec)
		if err != nil {
			ss.close()
			return nil, cfg, err
		}
		if i == 0 {
			cfg = c
		}
		ss.s[i] = s
	}
	return ss, cfg, nil
}

// restart closes variant v's subject and opens it anew: a new process where it has one.
func (ss *sides) restart(ctx context.Context, v int) error {
	if ss.s[v] != nil {
		_ = ss.s[v].Close()
		ss.s[v] = nil
	}
	s, _, err := ss.vs[v].Open(ctx, ss.spec)
	if err != nil {
		return err
	}
	ss.s[v] = s
	return nil
}

func (ss *sides) close() {
	for _, s := range ss.s {
		if s != nil {
			_ = s.Close()
		}
	}
}

// checker returns the requirement checker a run of sel would skip scenarios with, as run.List
// shows them: the variants of an A/B must be able to run here.
func checker(sel run.Selection, env run.Env) *suite.Checker {
	return &suite.Checker{Python: env.Python(), LookupEnv: env.Lookup, EnableMock: sel.EnableMock}
}
