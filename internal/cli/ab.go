package cli

import (
	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/internal/cli/ab"
	"github.com/inferbench/inferbench/internal/cli/progress"
	"github.com/inferbench/inferbench/run"
)

type abFlags struct {
	pairs, blockCalls, warmup int
	metric, better, format    string
	alpha, threshold          float64
	execMetrics, enableMock   bool
	model                     string
	set                       []string
}

func newAB(o *IO) *cobra.Command {
	var f abFlags
	cmd := &cobra.Command{
		Use:   "ab A B",
		Short: "Interleaved A/B of two variants on this machine: paired test, ratio with its interval, exit 3 when B regressed",
		Long: `ab runs two variants on this machine in alternating blocks (A then B, then B then A, ...), so that a
slow drift of the machine (thermal, clocks, neighbours, a latency mode that switches) falls on both
alike, and judges B against A with a paired t-test on the log ratios of the blocks' medians. It
prints the ratio B/A with its confidence interval (99% by default) and a verdict; B significantly
worse than A by more than the threshold is a regression (exit code 3), usable as a CI gate.

A variant is a scenario of a definition (BENCHMARK/SCENARIO, e.g. resnet/variant=compiled, or a
benchmark with one scenario), a command (exec:COMMAND: two builds are two commands) or an
OpenAI-compatible server (openai:URL with --model: two servers are two URLs). Both subjects are
opened once and stay open; each block is --block-calls measured calls.`,
		Example: `  inferbench ab resnet/variant=eager resnet/variant=compiled
  inferbench ab 'exec:./build-main/infer --n 1' 'exec:./build-pr/infer --n 1' --threshold 3
  inferbench ab openai:http://10.0.0.1:8000/v1 openai:http://10.0.0.2:8000/v1 --model llama --metric ttft_ms
  inferbench ab resnet/batch_size=8 resnet/batch_size=8 --set dtype=float16 --pairs 30 --format json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runAB(cmd, o, &f, args[0], args[1]) },
	}
	fl := cmd.Flags()
	fl.IntVar(&f.pairs, "pairs", 20, "pairs of blocks (A and B once each per pair)")
	fl.IntVar(&f.blockCalls, "block-calls", 20, "measured calls per block")
	fl.IntVar(&f.warmup, "warmup", 5, "warm-up calls of each variant before the first block")
	fl.StringVar(&f.metric, "metric", "latency_ms", "metric compared: latency_ms (the subject's own timing or the round trip), e2e_ms, ttft_ms, or a figure the subject reports per call")
	fl.StringVar(&f.better, "better", "", "direction of --metric when its name does not say it: higher or lower")
	fl.Float64Var(&f.alpha, "alpha", 0.01, "level of the paired test; the interval of the ratio has confidence 1 - alpha")
	fl.Float64Var(&f.threshold, "threshold", -1, "percent by which B may be worse before a significant difference is a regression (default: compare's for the metric, e.g. 15 for latency)")
	fl.StringVar(&f.format, "format", "text", "text or json")
	fl.BoolVar(&f.execMetrics, "exec-metrics", false, "exec: variants print a JSON object of metrics on their last stdout line")
	fl.StringVar(&f.model, "model", "", "openai: variants: the model to ask for")
	fl.StringArrayVar(&f.set, "set", nil, "override a parameter of definition variants, key=value (repeatable)")
	fl.BoolVar(&f.enableMock, "enable-mock", false, "allow mock subjects")
	return cmd
}

func runAB(cmd *cobra.Command, o *IO, f *abFlags, a, b string) error {
	opts := ab.CompareOptions{A: a, B: b, Better: f.better, Format: f.format, ExecMetrics: f.execMetrics, Model: f.model, Stdout: o.Stdout, Env: env(o),
		Options:   ab.Options{Pairs: f.pairs, BlockCalls: f.blockCalls, Warmup: f.warmup, Metric: f.metric, Alpha: f.alpha},
		Selection: run.Selection{Set: f.set, EnableMock: f.enableMock},
	}
	if f.warmup == 0 {
		opts.Options.Warmup = -1
	}
	if f.threshold >= 0 {
		opts.Options.Threshold = &f.threshold
	}
	if progress.Interactive(o.Stderr, o.LookupEnv) {
		opts.Progress = o.Stderr
	}
	_, err := ab.Compare(cmd.Context(), opts)
	return err
}
