package cli

import (
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/quick"
	"github.com/inferbench/inferbench/suite"
)

// quickFlags are run's quick modes: benchmarks from flags instead of YAML (package quick); those
// whose main setting (Exec.Command, OpenAI.URL, Framework.Framework) is empty are off.
type quickFlags struct {
	Exec      quick.Exec
	OpenAI    quick.OpenAI
	Framework quick.Framework
}

func (q *quickFlags) register(f *pflag.FlagSet) {
	e := &q.Exec
	f.StringVar(&e.Command, "exec", "", "benchmark this command (no definition needed); split like a shell, run without one")
	f.BoolVar(&e.Shell, "shell", false, "with --exec: run the command through /bin/sh -c")
	f.StringVar(&e.Name, "name", "exec", "with --exec: the benchmark's name")
	f.BoolVar(&e.Metrics, "exec-metrics", false, "with --exec: read a JSON object of metrics from the command's last stdout line")

	s := &q.OpenAI
	f.StringVar(&s.URL, "openai", "", "benchmark an OpenAI-compatible server at this base URL (e.g. http://127.0.0.1:8000/v1; no definition needed; --model names the model)")
	serverFlags(f, s)
	f.IntSliceVar(&s.Concurrency, "concurrency", nil, "with --openai: closed loop with this many requests in flight; several make one scenario each: --concurrency 1,8,64")
	f.Float64SliceVar(&s.Rates, "rate", nil, "with --openai: open loop at this many requests/s; several make one scenario each: --rate 5,10,20")
	f.StringVar(&s.Arrival, "arrival", "poisson", "with --rate or --sweep: arrival process: poisson, constant or gamma")
	f.Float64Var(&s.Burstiness, "burstiness", 0, "with --arrival gamma: the shape (1 is poisson, below 1 burstier)")
	f.DurationVar(&s.Duration, "duration", 0, "with --rate: send measured requests for this long (instead of --measurement-iterations)")
	f.DurationVar(&s.RampUp, "ramp-up", 0, "with --openai (--concurrency or --offline): start the workers spread over this long instead of all at once")
	f.IntVar(&s.MaxConcurrency, "max-concurrency", 0, "with --rate, --sweep or --offline: cap on requests in flight")
	f.Uint64Var(&s.Seed, "seed", 0, "with --openai: seed of the arrival schedule and the prompts")
	f.StringArrayVar(&s.SLOs, "slo", nil, "with --openai: service-level objective metric.stat=limit, e.g. --slo ttft_ms.p99=500 (repeatable); goodput counts requests meeting all")
	f.BoolVar(&s.Sweep, "sweep", false, "with --openai: sweep from synchronous to maximum throughput (the highest rate meeting SLOs: inferbench capacity)")
	f.IntVar(&s.SweepSteps, "sweep-steps", 4, "with --sweep: rates between the synchronous and the maximum")
	f.BoolVar(&s.Offline, "offline", false, "with --openai: send every request at once (--max-concurrency in flight)")
	f.StringVar(&s.InputTokens, "input-tokens", "", "with --openai: synthetic prompt length, a number or a distribution: lognormal(mean=550,std=150)")
	f.StringVar(&s.Prompts, "prompts", "", "with --openai: prompts from a JSONL or ShareGPT file instead of synthetic ones")
	f.IntVar(&s.SharedPrefix, "shared-prefix", 0, "with --openai: tokens of prefix shared by every prompt")
	f.BoolVar(&s.NoStream, "no-stream", false, "with --openai: ask for whole responses (no TTFT or ITL)")
	f.BoolVar(&s.NoUsage, "no-include-usage", false, "with --openai: do not send stream_options.include_usage (servers that reject it)")

	w := &q.Framework
	f.StringVar(&w.Framework, "framework", "", "benchmark a vision model in a framework worker: pytorch, jax or both (with --model resnet50, vit_b_16, both, or any torchvision model)")
	f.IntSliceVar(&w.BatchSizes, "batch-sizes", []int{1}, "with --framework: batch sizes, e.g. --batch-sizes 1 8 32")
	f.StringSliceVar(&w.DTypes, "dtype", nil, "with --framework: float32, float16, bfloat16 (several make a matrix axis)")
	f.StringSliceVar(&w.Variants, "variant", nil, "with --framework: eager, compiled, channels_last (default: eager in pytorch, jit in jax)")
	f.StringVar(&w.Device, "device", "auto", "with --framework: auto (cuda > mps > cpu), cpu, cuda, cuda:N, mps")
	f.IntVar(&w.ImageSize, "image-size", 224, "with --framework: input height and width")
	f.IntVar(&w.Threads, "threads", 0, "with --framework: torch intra-op threads (0: the framework's default)")
}

// serverFlags registers the flags of a server under load that run's quick mode and capacity
// both take, in the same words.
func serverFlags(f *pflag.FlagSet, s *quick.OpenAI) {
	f.StringVar(&s.Endpoint, "endpoint", "chat", "with --openai: chat or completions")
	f.StringVar(&s.APIKeyEnv, "api-key-env", "", "with --openai: environment variable holding the API key (never written anywhere)")
	f.StringVar(&s.OutputTokens, "output-tokens", "", "with --openai: max_tokens per request, a number or a distribution")
	f.BoolVar(&s.IgnoreEOS, "ignore-eos", false, "with --openai: always ask for exactly max_tokens (ignore_eos, min_tokens); by default requests ask where the server takes them (vLLM, SGLang, llama.cpp by /v1/models, others by a one-token request)")
}

// outputFlags registers where a run that measures goes and what it prints (run, capacity).
func outputFlags(f *pflag.FlagSet, dir, format *string) {
	f.StringVar(dir, "output-dir", "benchmark_results", "folder that receives a timestamped folder per run")
	formatFlag(f, format, "text", "the summary on stdout (table, its old name, is text)", "text", "json", "none")
}

// listFlags are the flags whose values may also be given space-separated, as other benchmark
// runners take them (--batch-sizes 1 8 32), with the test a following word must pass to be one.
var listFlags = map[string]func(string) bool{
	"--batch-sizes": func(s string) bool { _, err := strconv.Atoi(s); return err == nil },
	"--dtype":       quick.IsDType,
	"--variant":     quick.IsVariant,
	"--concurrency": isNumber,
	"--rate":        isNumber,
}

func isNumber(s string) bool { _, err := strconv.ParseFloat(s, 64); return err == nil }

// joinListFlags rewrites "--batch-sizes 1 8 32" as "--batch-sizes 1,8,32" (and likewise for the
// other listFlags), leaving everything after "--" alone.
func joinListFlags(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		ok := listFlags[a]
		if ok == nil || i+1 >= len(args) {
			out = append(out, a)
			continue
		}
		vals := []string{args[i+1]}
		i++
		for i+1 < len(args) && ok(args[i+1]) {
			vals = append(vals, args[i+1])
			i++
		}
		out = append(out, a, strings.Join(vals, ","))
	}
	return out
}

// benchmarks returns the benchmarks of the modes that are on (none when all are off), with models
// the names given with --model and dir the working directory. It returns the model names the
// run must select (the framework mode's, "both" expanded), or models unchanged.
func (m quickFlags) benchmarks(models []string, dir string) (benches []*suite.Benchmark, selected []string, err error) {
	selected = models
	add := func(bs []*suite.Benchmark, e error) {
		benches = append(benches, bs...)
		err = e
	}
	if m.Exec.Command != "" {
		m.Exec.Dir = dir
		if add(m.Exec.Benchmarks()); err != nil {
			return nil, nil, err
		}
	}
	if m.OpenAI.URL != "" {
		m.OpenAI.Dir, m.OpenAI.Model = dir, ""
		if len(models) == 1 {
			m.OpenAI.Model = models[0]
		}
		if add(m.OpenAI.Benchmarks()); err != nil {
			return nil, nil, err
		}
	}
	if m.Framework.Framework != "" {
		m.Framework.Dir, m.Framework.Models = dir, models
		if add(m.Framework.Benchmarks()); err != nil {
			return nil, nil, err
		}
		selected = m.Framework.ModelNames()
	}
	return benches, selected, nil
}
