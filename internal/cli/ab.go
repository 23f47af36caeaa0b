package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/internal/cli/ab"
	"github.com/inferbench/inferbench/internal/cli/progress"
	"github.com/inferbench/inferbench/run"
)

type abFlags struct {
	pairs, blockCalls, warmup       int
	metric, better, format          string
	alpha, threshold                float64
	execMetrics, enableMock, strict bool
	maxTime                         time.Duration
	model                           string
	set                             []string
}

func newAB(o *IO) *cobra.Command {
	var f abFlags
	cmd := &cobra.Command{
		Use:   "ab A B",
		Short: "Interleaved A/B of two variants on this machine: paired test, ratio with its interval, exit 3 when B regressed",
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
process's starting state falls on one side.`,
		Example: `  inferbench ab resnet/variant=eager resnet/variant=compiled
  inferbench ab 'exec:./build-main/infer --n 1' 'exec:./build-pr/infer --n 1' --threshold 3
  inferbench ab openai:http://10.0.0.1:8000/v1 openai:http://10.0.0.2:8000/v1 --model llama --metric ttft_ms
  inferbench ab resnet/batch_size=8 resnet/batch_size=8 --set dtype=float16 --pairs 30 --format json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runAB(cmd, o, &f, args[0], args[1]) },
	}
	fl := cmd.Flags()
	fl.IntVar(&f.pairs, "pairs", 0, "a fixed number of pairs of blocks, judged once (0: as many as the answer needs, up to --max-time)")
	fl.IntVar(&f.blockCalls, "block-calls", 0, "measured calls per block (0: blocks of about 200 ms)")
	fl.DurationVar(&f.maxTime, "max-time", 2*time.Minute, "the time the A/B may measure before its answer is unknown")
	fl.BoolVar(&f.strict, "strict", false, "fail (exit 1) when the answer is unknown")
	fl.IntVar(&f.warmup, "warmup", 5, "warm-up calls of each variant before the first block")
	fl.StringVar(&f.metric, "metric", "latency_ms", "metric compared: latency_ms (the subject's own timing or the round trip), e2e_ms, ttft_ms, or a figure the subject reports per call")
	fl.StringVar(&f.better, "better", "", "direction of --metric when its name does not say it: higher or lower")
	fl.Float64Var(&f.alpha, "alpha", 0.01, "the rate at which unchanged code fails, over all the looks")
	fl.Float64Var(&f.threshold, "threshold", ab.DefaultThreshold, "percent: B is slower when its interval lies wholly beyond it, the same when wholly within it")
	formatFlag(fl, &f.format, "text", "", "text", "json")
	fl.BoolVar(&f.execMetrics, "exec-metrics", false, "exec: variants print a JSON object of metrics on their last stdout line")
	fl.StringVar(&f.model, "model", "", "openai: variants: the model to ask for")
	fl.StringArrayVar(&f.set, "set", nil, "override a parameter of definition variants, key=value (repeatable)")
	fl.BoolVar(&f.enableMock, "enable-mock", false, "allow mock subjects")
	groupFlags(cmd,
		flagGroup{"The variants", []string{"model", "set", "enable-mock", "exec-metrics"}},
		flagGroup{"How long", []string{"warmup", "pairs", "block-calls", "max-time"}},
		flagGroup{"The answer", []string{"metric", "better", "alpha", "threshold", "strict"}},
		flagGroup{"Output", []string{"format"}})
	return cmd
}

func runAB(cmd *cobra.Command, o *IO, f *abFlags, a, b string) error {
	opts := ab.CompareOptions{A: a, B: b, Better: f.better, Format: f.format, ExecMetrics: f.execMetrics, Model: f.model, Stdout: o.Stdout, Env: env(o),
		Strict:    f.strict,
		Options:   ab.Options{Pairs: f.pairs, BlockCalls: f.blockCalls, Warmup: f.warmup, Metric: f.metric, Alpha: f.alpha, MaxTime: f.maxTime},
		Selection: run.Selection{Set: f.set, EnableMock: f.enableMock},
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
	}
	_, err := ab.Compare(cmd.Context(), opts)
	return err
}
