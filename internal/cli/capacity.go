package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/internal/base/inert"
	"github.com/inferbench/inferbench/internal/cli/progress"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/quick"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
)

// capacityFlags are `inferbench capacity`'s flags; run turns them into the search.
type capacityFlags struct {
	sel      selection
	q        quick.OpenAI
	cc       load.CapacityConfig
	search   *pflag.FlagSet // the search's flags (searchFlags), cc's
	sf       storeFlags
	cf       compareFlags
	out      string
	format   string
	baseline string
	noStore  bool
	timeout  time.Duration
}

func newCapacity(o *IO) *cobra.Command {
	var cf capacityFlags
	cf.search = searchFlags(&cf.cc)
	cmd := &cobra.Command{
		Use:   "capacity [PATH...]",
		Short: "Find the highest request rate a server holds within its SLOs",
		Long: `capacity searches Poisson arrival rates for the highest one whose SLOs hold (load mode
capacity, docs/serving.md "Capacity"): it doubles or halves the rate until a step passes and one
fails, then bisects. Each step sends requests until its verdict is known: pass when every SLO's
attainment (the fraction of requests within the limit; ttft_ms.p99=500 asks for 99%) is above its
target with confidence, fail when one is below, not yet known otherwise, which extends the step.
The confidence counts requests that queue together as one: misses come in clusters.

It prints and records capacity_rps (the estimate) and capacity_lower_rps (a one-sided 95% lower
bound), and run.json's extra.capacity keeps the steps and the curve of attainment against rate;
report.html draws it. Where this machine's client cannot send a rate without delays of its own
(a busy runner), the search judges only below that rate and answers that the capacity is at least
the highest rate that passed there (capacity_lower_rps, with capacity_client_limit_rps). With --openai it runs without a definition; with PATHs it runs the serving
scenarios of the definitions found there (their server: block starts the server) in mode capacity,
their load settings and SLOs kept where the flags do not say. Exit code 3 when --baseline finds the
capacity lower.`,
		Example: `  inferbench capacity --openai http://127.0.0.1:8000/v1 --model m --slo ttft_ms.p99=500 --slo tpot_ms.p99=50
  inferbench capacity --openai http://127.0.0.1:8000/v1 --model m --slo ttft_ms=500 --slo itl_ms=50 --attainment 0.9
  inferbench capacity benches/llm.yaml --include 'llama-8b*' --start-rate 20 --baseline main
  inferbench mockserver --slots 8 --prefill-ms 4 --token-ms 1 --batch-slowdown 0.05 --output-tokens 32 &
  inferbench capacity --openai http://127.0.0.1:8000/v1 --model mock --output-tokens 32 --slo ttft_ms.p90=20 --slo e2e_ms.p90=80`,
		RunE: func(cmd *cobra.Command, args []string) error { return cf.run(cmd, o, args) },
	}
	f := cmd.Flags()
	cf.sel.register(cmd)
	q := &cf.q
	f.StringVar(&q.URL, "openai", "", "search the OpenAI-compatible server at this base URL (no definition needed; --model names the model)")
	serverFlags(f, q)
	f.StringArrayVar(&q.SLOs, "slo", nil, "service-level objective metric.pNN=limit, e.g. --slo ttft_ms.p99=500 (repeatable; a percentile: the share of requests within the limit)")
	f.AddFlagSet(cf.search)
	f.IntVar(&q.Requests, "requests", 0, "with --openai and no --start-rate: requests of the throughput step (default 100)")
	f.IntVar(&q.MaxConcurrency, "max-concurrency", 0, "with --openai: cap on requests in flight")
	f.StringVar(&q.InputTokens, "input-tokens", "", "with --openai: synthetic prompt length, a number or a distribution")
	f.StringVar(&q.Prompts, "prompts", "", "with --openai: prompts from a JSONL or ShareGPT file")
	f.Uint64Var(&q.Seed, "seed", 0, "seed of the arrival schedules and the prompts")
	f.DurationVar(&cf.timeout, "timeout", 0, "per-request timeout, and of each request probing the server at the start (default 5m)")
	outputFlags(f, &cf.out, &cf.format)
	cf.sf.register(f)
	cf.cf.register(f)
	f.StringVar(&cf.baseline, "baseline", "", "compare with this baseline afterwards (exit code 3 when the capacity is lower)")
	f.BoolVar(&cf.noStore, "no-store", false, "do not record the run in the history store")
	groupFlags(cmd,
		flagGroup{"What to search", []string{"openai", "model", "model-id", "include", "exclude", "category", "tag", "set",
			"enable-mock", "num-tokens-to-generate"}},
		flagGroup{"SLOs and the search", []string{"slo", "attainment", "start-rate", "min-requests", "max-requests",
			"warmup-requests", "max-steps", "tolerance", "seed", "timeout"}},
		flagGroup{"The server's requests (with --openai)", []string{"endpoint", "api-key-env", "input-tokens", "output-tokens",
			"prompts", "ignore-eos", "requests", "max-concurrency"}},
		flagGroup{"Comparison and gate", []string{"baseline", "threshold", "thresholds-file", "budget-file", "alpha", "gate",
			"uncorrected", "strict"}},
		flagGroup{"Output", []string{"output-dir", "format"}},
		flagGroup{"Store", []string{"store", "no-store"}})
	needFlags(cmd, need{[]string{"endpoint", "api-key-env", "input-tokens", "output-tokens", "prompts", "ignore-eos",
		"requests", "max-concurrency"}, []string{"openai"}})
	return cmd
}

// run searches the capacity of the server or the definitions' servers.
func (cf *capacityFlags) run(cmd *cobra.Command, o *IO, args []string) error {
	f, q := cmd.Flags(), cf.q
	opts := run.Options{
		Selection: cf.sel.selection(o, args), OutputDir: cf.out,
		Store: cf.sf.url, NoStore: cf.noStore, Baseline: cf.baseline, Format: cf.format,
		Stdout: o.Stdout, Stderr: o.Stderr, Dir: o.Dir, Env: o.Env, Args: o.Args, Version: Version,
	}
	var err error
	if opts.Compare, err = cf.cf.config(o, f); err != nil {
		return err
	}
	slos, err := quick.ParseSLOs(q.SLOs)
	if err != nil {
		return usageErr("%v", err)
	}
	if q.URL != "" {
		q.Offline = true // one scenario, whose first step (without --start-rate) is a throughput step
		if opts.Selection.Benchmarks, opts.Selection.Filter.Model, err = (quickFlags{OpenAI: q}).benchmarks(opts.Selection.Filter.Model, env(o).WorkDir()); err != nil {
			return usageErr("%v", err)
		}
	} else if len(slos) == 0 && len(args) == 0 {
		return usageErr("capacity: give --openai URL with --slo, or definitions (see 'inferbench capacity --help')")
	}
	opts.Load.Mode = load.ModeCapacity
	opts.Load.SLO = slos
	opts.Load.Timeout = cf.timeout
	if f.Changed("seed") {
		opts.Load.Seed = q.Seed
	}
	c := cf.cc
	// The search's flags replace a definition's capacity block only when one is given.
	cf.search.VisitAll(func(fl *pflag.Flag) {
		if fl.Changed {
			opts.Load.Capacity = &c
		}
	})
	if len(slos) > 0 {
		if err := c.Validate(slos); err != nil {
			return usageErr("%v", err)
		}
	}
	prog := progress.New(o.Stderr, o.LookupEnv)
	opts.Observers = append(opts.Observers, prog)
	if !prog.Shown() {
		opts.Log = consoleHandler(o.Stderr, opts.LogLevel, false)
	}
	r, err := run.Run(cmd.Context(), opts)
	if r != nil && cf.format == "text" {
		printCapacity(o.Stdout, r)
	}
	return err
}

// searchFlags are the capacity search's settings, in a set of their own: given on the command
// line, they replace a definition's capacity block.
func searchFlags(cc *load.CapacityConfig) *pflag.FlagSet {
	f := pflag.NewFlagSet("search", pflag.ContinueOnError)
	f.Float64Var(&cc.Attainment, "attainment", 0, "judge the SLOs together, as goodput: this fraction of requests must meet every limit (e.g. 0.9); default: each SLO by its percentile")
	f.Float64Var(&cc.Start, "start-rate", 0, "first rate tried, requests/s (default: half of what a first throughput step completes)")
	f.IntVar(&cc.MinRequests, "min-requests", 0, "measured requests at a step's first look (default 200, or 20/(1-target): 2000 at p99)")
	f.IntVar(&cc.MaxRequests, "max-requests", 0, "measured requests a step sends at most (default 8 × --min-requests)")
	f.IntVar(&cc.WarmupRequests, "warmup-requests", 0, "requests sent unmeasured at the start of each step (default --min-requests / 4)")
	f.IntVar(&cc.MaxSteps, "max-steps", 0, "steps at most (default 12)")
	f.Float64Var(&cc.Tolerance, "tolerance", 0, "stop when the highest pass and the lowest fail are this close, as a fraction (default 0.03)")
	return f
}

// printCapacity writes each capacity scenario's answer under the run's summary table, whose
// latency columns mix the search's steps.
func printCapacity(w io.Writer, r *result.Run) {
	for _, sc := range r.Scenarios {
		c, ok := sc.Metrics["capacity_rps"].Center()
		lo, _ := sc.Metrics["capacity_lower_rps"].Center()
		n, steps := sc.Metrics["capacity_steps"].Center()
		limit, limited := sc.Metrics["capacity_client_limit_rps"].Center()
		switch {
		case limited:
			fmt.Fprintf(w, "capacity %s: at least %.4g req/s (the client limited the search at %.4g req/s; the warning above says what to do) in %.0f steps\n",
				inert.Text(sc.ID()), lo, limit, n)
		case ok:
			fmt.Fprintf(w, "capacity %s: %.4g req/s (95%% lower bound %.4g req/s) in %.0f steps\n", inert.Text(sc.ID()), c, lo, n)
		case steps:
			// A search without an answer: it stopped (its error says why), or no step passed.
			why := fmt.Sprintf("no step passed in %.0f steps", n)
			if sc.Error != "" {
				why = fmt.Sprintf("the search stopped after %.0f steps (the error above says why)", n)
			}
			fmt.Fprintf(w, "capacity %s: none: %s; run.json keeps the steps\n", inert.Text(sc.ID()), why)
		}
	}
}
