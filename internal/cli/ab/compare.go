package ab

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/internal/redact"
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
	Options Options // pairs, blocks, warm-up, metric, alpha, threshold
	// Better is the direction of the metric when its name does not say it: higher or lower.
	Better string
	// Selection finds definition variants: its Paths, Funcs, Set (parameter overrides) and
	// EnableMock.
	Selection   run.Selection
	ExecMetrics bool   // exec: variants print a JSON object of metrics on their last stdout line
	Model       string // openai: variants ask for this model
	Format      string // text or json, written to Stdout
	// Strict fails an A/B whose answer is unknown (the pairs or the time ran out first).
	Strict bool
	Stdout io.Writer
	// Progress, when set, receives a line of progress per block, rewritten with \r.
	Progress io.Writer
	Env      run.Env
}

// Compare resolves and opens the two variants, runs the A/B and writes its result to o.Stdout.
// The error is run.ErrUsage for bad options or variants, run.ErrRegression when B regressed
// against A.
// Secrets (a URL's password, a definition's header values, secret environment variables) are
// redacted from the result, what it writes and the error, as in a run.
func Compare(ctx context.Context, o CompareOptions) (*Result, error) {
	red := redact.New()
	red.Env(o.Env.Vars)
	res, err := compareVariants(ctx, o, red)
	if res != nil {
		res.A, res.B = red.String(res.A), red.String(res.B)
		for i, w := range res.Warnings {
			res.Warnings[i] = red.String(w)
		}
	}
	return res, red.Error(err)
}

func compareVariants(ctx context.Context, o CompareOptions, red *redact.Redactor) (*Result, error) {
	if o.Format != "text" && o.Format != "json" {
		return nil, exit.UsageError(fmt.Errorf("--format %q: want text or json", o.Format))
	}
	opts := o.Options
	if o.Better != "" {
		d, err := result.ParseDirection(o.Better)
		if err != nil {
			return nil, exit.UsageError(fmt.Errorf("--better: %v", err))
		}
		opts.Better = d
	}
	if (opts.Pairs != 0 && opts.Pairs < 3) || opts.Pairs < 0 || opts.BlockCalls < 0 {
		return nil, exit.UsageError(fmt.Errorf("--pairs %d --block-calls %d: want at least 3 pairs (0: as many as the answer needs) and 0 or more calls per block (0: blocks of about 200 ms)", opts.Pairs, opts.BlockCalls))
	}
	e, sel := o.Env, o.Selection
	set := map[string]any{}
	for _, kv := range sel.Set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, exit.UsageError(fmt.Errorf("--set %q: want key=value", kv))
		}
		set[k] = suite.ParseValue(v)
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
	var vs [2]*Variant
	for i, name := range []string{o.A, o.B} {
		v, err := spec.Resolve(name)
		if err != nil {
			return nil, exit.UsageError(err)
		}
		vs[i] = v
	}
	red.Add(secrets.Of(e.Vars, []*suite.Scenario{vs[0].Scenario, vs[1].Scenario})...)
	out := redact.NewWriter(o.Stdout, red)
	defer out.Flush()
	subs, cfg, err := openSides(ctx, spec, vs)
	if err != nil {
		return nil, err
	}
	defer subs.close()
	opts.Restart = subs.restart
	if o.Progress != nil {
		opts.Progress = func(bl Block) {
			fmt.Fprint(o.Progress, red.String(fmt.Sprintf("\rab: pair %d/%d, block %s: median %.4g", bl.Pair+1, opts.Pairs, bl.Variant, bl.Median)))
		}
	}
	res, err := Run(ctx, red.String(o.A), red.String(o.B), subjectsWith(&subs.s, cfg, opts.Metric, nil), opts)
	if o.Progress != nil {
		fmt.Fprintln(o.Progress)
	}
	if err != nil {
		return nil, err
	}
	if o.Format == "json" {
		enc := finite.NewEncoder(out)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	} else {
		err = res.WriteText(out)
	}
	if err != nil {
		return res, err
	}
	if res.Failed() {
		return res, exit.RegressionError(fmt.Errorf("B (%s) regressed against A (%s): %s", o.B, o.A, res.answerLine()))
	}
	if o.Strict && res.Undecided() {
		return res, exit.Mark(run.ErrFailed, "--strict: "+res.answerLine())
	}
	return res, nil
}

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
