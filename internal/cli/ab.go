package cli

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/cli/ab"
	"github.com/inferbench/inferbench/internal/cli/progress"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
)

type abFlags struct {
	pairs, blockCalls, warmup int
	metric, format, outputDir string
	alpha, threshold          float64
	execMetrics, strict       bool
	noStore                   bool
	maxTime                   time.Duration
	model                     string
	set                       []string
}

func newAB(o *IO) *cobra.Command {
	var f abFlags
	cmd := &cobra.Command{
		Use:   "ab A B",
		Short: "Interleaved A/B of two variants on this machine: a run of B with A beside it, paired test, exit 3 when B regressed",
		Long: `ab runs two variants on this machine in alternating blocks of about 200 ms (A then B, then B then
A, ...), so that a drift of the machine (thermal, clocks, neighbours, a speed that switches every
few seconds) falls on both alike, and judges B against A on the log ratios of the blocks' medians
(their Hodges-Lehmann shift, with its signed-rank interval). It adds pairs until the interval says
slower (wholly beyond the threshold: exit code 3), same (wholly within it), or until --max-time
is spent: unknown, with the smallest slowdown it could have seen (--strict fails it). The repeated
looks are accounted for: unchanged code fails at most at --alpha.

A variant is a scenario of a definition (BENCHMARK/SCENARIO, e.g. resnet/variant=compiled, or a
benchmark with one scenario), a command (exec:COMMAND: two builds are two commands) or an
OpenAI-compatible server (openai:URL with --model: two servers are two URLs). A subject with a
process of its own is relaunched every 8 pairs, the two in turn, so that neither a streak nor a
process's starting state falls on one side.

The A/B is a run of B, the side under test: a run folder under --output-dir (run.json with B's
calls as its scenario's metric and A's calls and the A/B in its "ab" section, compare.json,
compare.md, run.log, report.html), recorded in the history store unless --no-store, and its
summary and verdict printed as a run's (docs/ab.md).`,
		Example: `  inferbench ab resnet/variant=eager resnet/variant=compiled
  inferbench ab 'exec:./build-main/infer --n 1' 'exec:./build-pr/infer --n 1' --threshold 3
  inferbench ab openai:http://10.0.0.1:8000/v1 openai:http://10.0.0.2:8000/v1 --model llama --metric ttft_ms
  inferbench ab resnet/batch_size=8 resnet/batch_size=8 --set dtype=float16 --pairs 30 --format json --no-store
  inferbench ab 'exec:./a.sh' 'exec:./b.sh' --exec-metrics --metric tokens_per_call:higher`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runAB(cmd, o, &f, args[0], args[1]) },
	}
	fl := cmd.Flags()
	fl.IntVar(&f.pairs, "pairs", 0, "a fixed number of pairs of blocks, judged once (0: as many as the answer needs, up to --max-time)")
	fl.IntVar(&f.blockCalls, "block-calls", 0, "measured calls per block (0: blocks of about 200 ms)")
	fl.DurationVar(&f.maxTime, "max-time", 2*time.Minute, "the time the A/B may measure before its answer is unknown")
	fl.BoolVar(&f.strict, "strict", false, "fail (exit 3) when the answer is unknown")
	fl.IntVar(&f.warmup, "warmup", 5, "warm-up calls of each variant before the first block")
	fl.StringVar(&f.metric, "metric", "latency_ms", "metric compared: latency_ms (the subject's own timing or the round trip), e2e_ms, ttft_ms, or a figure the subject reports per call; NAME:higher or NAME:lower gives its direction when its name does not say it")
	fl.Float64Var(&f.alpha, "alpha", 0.01, "the rate at which unchanged code fails, over all the looks")
	fl.Float64Var(&f.threshold, "threshold", ab.DefaultThreshold, "percent: B is slower when its interval lies wholly beyond it, the same when wholly within it")
	outputFlags(fl, &f.outputDir, &f.format)
	fl.BoolVar(&f.noStore, "no-store", false, "do not record the run in the history store")
	fl.BoolVar(&f.execMetrics, "exec-metrics", false, "exec: variants print a JSON object of metrics on their last stdout line")
	fl.StringVar(&f.model, "model", "", "openai: variants: the model to ask for")
	fl.StringArrayVar(&f.set, "set", nil, "override a parameter of definition variants, key=value (repeatable)")
	groupFlags(cmd,
		flagGroup{"The variants", []string{"model", "set", "exec-metrics"}},
		flagGroup{"How long", []string{"warmup", "pairs", "block-calls", "max-time"}},
		flagGroup{"The answer", []string{"metric", "alpha", "threshold", "strict"}},
		flagGroup{"Output", []string{"output-dir", "format", "no-store"}})
	return cmd
}

// abRefused are the ab flags that would be ignored by the A/B they are given with, with why:
// each is refused when set, never silently ignored. A flag of the variants is refused when
// neither variant is of its kind (exec:, openai:, a definition).
var abRefused = []struct {
	flag, with, why string
	ok              func(a, b string) bool // whether a variant takes the flag; nil: always refused with --with
}{
	{flag: "max-time", with: "pairs", why: "a fixed design runs its pairs and is judged once; --max-time bounds a sequential A/B"},
	{flag: "exec-metrics", why: "only exec: variants print metrics", ok: func(a, b string) bool { return isKind(a, "exec:") || isKind(b, "exec:") }},
	{flag: "model", why: "only openai: variants ask for a model", ok: func(a, b string) bool { return isKind(a, "openai:") || isKind(b, "openai:") }},
	{flag: "set", why: "only definition variants (BENCHMARK/SCENARIO) have parameters", ok: func(a, b string) bool { return isDefinition(a) || isDefinition(b) }},
}

func isKind(v, prefix string) bool { return strings.HasPrefix(v, prefix) }

func isDefinition(v string) bool { return !isKind(v, "exec:") && !isKind(v, "openai:") }

// refuseAB refuses the flags of abRefused that the A/B of a and b would ignore.
func refuseAB(f *pflag.FlagSet, a, b string) error {
	for _, r := range abRefused {
		if !f.Changed(r.flag) {
			continue
		}
		switch {
		case r.with != "" && f.Changed(r.with):
			return usageErr("ab --%s with --%s: %s; drop one of them", r.flag, r.with, r.why)
		case r.ok != nil && !r.ok(a, b):
			return usageErr("ab --%s: %s, and neither %s nor %s is one; drop it", r.flag, r.why, a, b)
		}
	}
	return nil
}

// runAB is `inferbench ab A B`: a run of B with A beside it, interleaved (ab.Compare).
func runAB(cmd *cobra.Command, o *IO, f *abFlags, a, b string) error {
	if err := refuseAB(cmd.Flags(), a, b); err != nil {
		return err
	}
	metric, better, hasDir := strings.Cut(f.metric, ":")
	opts := ab.CompareOptions{A: a, B: b, ExecMetrics: f.execMetrics, Model: f.model,
		Options: ab.Options{Pairs: f.pairs, BlockCalls: f.blockCalls, Warmup: f.warmup, Metric: metric, Alpha: f.alpha, MaxTime: f.maxTime},
		Run: run.Options{Selection: run.Selection{Set: f.set}, OutputDir: f.outputDir, NoStore: f.noStore,
			Format: f.format, Stdout: o.Stdout, Stderr: o.Stderr, Compare: compare.Config{Alpha: f.alpha, Strict: f.strict},
			Dir: o.Dir, Env: o.Env, Args: o.Args, Version: Version},
	}
	if hasDir {
		d, err := result.ParseDirection(better)
		if err != nil {
			return usageErr("--metric %s: %v", f.metric, err)
		}
		opts.Options.Better = d
	}
	if f.warmup == 0 {
		opts.Options.Warmup = -1
	}
	if !(f.threshold >= 0) {
		return usageErr("--threshold %v: want a percent of 0 or more", f.threshold)
	}
	opts.Options.Threshold = &f.threshold
	if progress.Interactive(o.Stderr, o.LookupEnv) {
		opts.Progress = o.Stderr
	} else {
		opts.Run.Log = consoleHandler(o.Stderr, 0, false)
	}
	_, err := ab.Compare(cmd.Context(), opts)
	return err
}
