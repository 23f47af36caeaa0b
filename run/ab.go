package run

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/inferbench/inferbench/internal/ab"
	"github.com/inferbench/inferbench/internal/finite"
	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// ABOptions are an interleaved A/B of two variants on this machine (package ab): `inferbench ab`.
type ABOptions struct {
	A, B string     // the variants: BENCHMARK/SCENARIO, exec:COMMAND or openai:URL
	AB   ab.Options // pairs, blocks, warm-up, metric, alpha, threshold
	// Better is the direction of the metric when its name does not say it: higher or lower.
	Better string
	// Selection finds definition variants: its Paths, Funcs, Set (parameter overrides) and
	// EnableMock.
	Selection   Selection
	ExecMetrics bool   // exec: variants print a JSON object of metrics on their last stdout line
	Model       string // openai: variants ask for this model
	Format      string // text or json, written to Stdout
	Stdout      io.Writer
	// Progress, when set, receives a line of progress per block, rewritten with \r.
	Progress io.Writer
	Env      Env
}

// AB resolves and opens the two variants, runs the A/B and writes its result to o.Stdout. The
// error is ErrUsage for bad options or variants, ErrRegression when B regressed against A.
// Secrets (a URL's password, a definition's header values, secret environment variables) are
// redacted from the result, what it writes and the error, as in a run.
func AB(ctx context.Context, o ABOptions) (*ab.Result, error) {
	red := redact.New()
	red.Env(o.Env.Vars)
	res, err := runAB(ctx, o, red)
	if res != nil {
		res.A, res.B = red.String(res.A), red.String(res.B)
		for i, w := range res.Warnings {
			res.Warnings[i] = red.String(w)
		}
	}
	return res, red.Error(err)
}

func runAB(ctx context.Context, o ABOptions, red *redact.Redactor) (*ab.Result, error) {
	if o.Format != "text" && o.Format != "json" {
		return nil, usageErr("--format %q: want text or json", o.Format)
	}
	opts := o.AB
	if o.Better != "" {
		d, err := result.ParseDirection(o.Better)
		if err != nil {
			return nil, usageErr("--better: %v", err)
		}
		opts.Better = d
	}
	if opts.Pairs < 3 || opts.BlockCalls < 1 {
		return nil, usageErr("--pairs %d --block-calls %d: want at least 3 pairs and 1 call per block", opts.Pairs, opts.BlockCalls)
	}
	e, sel := o.Env, o.Selection
	set := map[string]any{}
	for _, kv := range sel.Set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageErr("--set %q: want key=value", kv)
		}
		set[k] = suite.ParseValue(v)
	}
	spec := ab.Spec{
		Benchmarks:  func() ([]*suite.Benchmark, error) { return Discover(sel, e) },
		Set:         set,
		Check:       Checker(sel, e).Check,
		Dir:         e.WorkDir(),
		Env:         e.Vars,
		ExecMetrics: o.ExecMetrics,
		Model:       o.Model,
	}
	var vs [2]*ab.Variant
	for i, name := range []string{o.A, o.B} {
		v, err := spec.Resolve(name)
		if err != nil {
			return nil, UsageError(err)
		}
		vs[i] = v
	}
	learnDefinitionSecrets(red, e.Vars, []*suite.Scenario{vs[0].Scenario, vs[1].Scenario})
	out := redact.NewWriter(o.Stdout, red)
	defer out.Flush()
	sa, cfg, err := vs[0].Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer sa.Close()
	sb, _, err := vs[1].Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer sb.Close()
	if o.Progress != nil {
		opts.Progress = func(bl ab.Block) {
			fmt.Fprint(o.Progress, red.String(fmt.Sprintf("\rab: pair %d/%d, block %s: median %.4g", bl.Pair+1, opts.Pairs, bl.Variant, bl.Median)))
		}
	}
	res, err := ab.Run(ctx, red.String(o.A), red.String(o.B), ab.Subjects(sa, sb, cfg, opts.Metric), opts)
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
		return res, regression("B (%s) regressed against A (%s): B/A = %.4f", o.B, o.A, res.Ratio)
	}
	return res, nil
}
