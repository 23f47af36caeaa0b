package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/internal/mockserver"
)

func newMockserver(o *IO) *cobra.Command {
	var (
		cfg                     mockserver.Config
		addr, ttft, itl, output string
	)
	cmd := &cobra.Command{
		Use:   "mockserver",
		Short: "Serve a mock OpenAI-compatible API with programmable timing",
		Long: `mockserver answers POST /v1/chat/completions and /v1/completions (streamed or not) and
GET /v1/models like an LLM server, with the time to first token, the inter-token gap and the response
length drawn from seeded distributions, usage reports, and injected faults. It serves until
interrupted. GET /debug/emits lists when it sent each event (with --record).

Distributions: a number, fixed(v), uniform(min,max), normal(mean=,std=), lognormal(mean=,std=),
with optional min= and max= clamps.`,
		Example: `  inferbench mockserver --addr 127.0.0.1:8000 --ttft-ms 'lognormal(mean=200,std=50)' --itl-ms 10
  inferbench mockserver --output-tokens 'uniform(50,300)' --error-rate 0.01 --disconnect-rate 0.01
  inferbench mockserver --shape vllm --ttft-ms 20 --itl-ms 5 --record 10000
  inferbench mockserver --slots 8 --prefill-ms 4 --token-ms 1 --batch-slowdown 0.05 --output-tokens 32
  inferbench run --openai http://127.0.0.1:8000/v1 --model mock --concurrency 1,8,64 --requests 500`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.ParseTiming(ttft, itl, output); err != nil {
				return usageErr("%v", err)
			}
			if err := cfg.Validate(); err != nil {
				return usageErr("%v", err)
			}
			ctx := cmd.Context()
			url, err := mockserver.New(cfg).Start(ctx, addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(o.Stdout, "mockserver: serving %s\n", url)
			<-ctx.Done()
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8000", "address to listen on")
	f.StringVar(&cfg.Model, "served-model", "", "the only model name accepted (default: any, listed as mock)")
	f.StringVar(&ttft, "ttft-ms", "", "time to first token in ms (a distribution)")
	f.StringVar(&itl, "itl-ms", "", "gap between content events in ms (a distribution)")
	f.StringVar(&output, "output-tokens", "", "response length in tokens, capped by max_tokens (default: max_tokens, else 16)")
	f.IntVar(&cfg.TokensPerEvent, "tokens-per-event", 1, "tokens in each content event")
	f.Uint64Var(&cfg.Seed, "seed", 0, "seed of the draws")
	f.BoolVar(&cfg.NoUsage, "no-usage", false, "never report usage")
	f.Float64Var(&cfg.ErrorRate, "error-rate", 0, "fraction of requests answered with --error-status")
	f.IntVar(&cfg.ErrorStatus, "error-status", 500, "with --error-rate: status of injected errors")
	f.Float64Var(&cfg.DisconnectRate, "disconnect-rate", 0, "fraction of streams cut mid-way")
	f.Float64Var(&cfg.ErrorEventRate, "error-event-rate", 0, "fraction of streams ending with an error event")
	f.Float64Var(&cfg.StallRate, "stall-rate", 0, "fraction of responses that pause once for --stall")
	f.DurationVar(&cfg.Stall, "stall", time.Second, "with --stall-rate: length of a stall")
	f.IntVar(&cfg.Record, "record", 0, "requests whose emit times are kept for /debug/emits")
	f.IntVar(&cfg.Capacity.Slots, "slots", 0, "capacity model: sequences generated at once, the rest queue (0: no model, --ttft-ms and --itl-ms time each request)")
	f.Float64Var(&cfg.Capacity.PrefillMs, "prefill-ms", 0, "with --slots, capacity model: an iteration's time per request it admits, at batch 1")
	f.Float64Var(&cfg.Capacity.TokenMs, "token-ms", 0, "with --slots, capacity model: an iteration's time at batch 1 (each sequence gets a token per iteration)")
	f.Float64Var(&cfg.Capacity.BatchSlowdown, "batch-slowdown", 0, "with --slots, capacity model: each further sequence in the batch lengthens an iteration by this fraction")
	f.Float64Var(&cfg.Capacity.Scale, "time-scale", 1, "with --slots, capacity model: multiplies its times (0.1: ten times faster)")
	f.BoolVar(&cfg.PrefixCache, "prefix-cache", false, "model a prefix cache and serve its counters at GET /metrics under vLLM's names (a second run with the same prompts finds them)")
	f.IntVar(&cfg.UsageOffset, "usage-offset", 0, "add this to the completion tokens usage reports (-2: two fewer than streamed), as a server whose usage disagrees")
	f.Float64Var(&cfg.ShortRate, "short-rate", 0, "fraction of responses that stop early, before max_tokens, unless the request sets ignore_eos or min_tokens")
	f.BoolVar(&cfg.RefuseExact, "refuse-exact", false, "answer requests that set ignore_eos or min_tokens with HTTP 400, as an API that takes neither")
	f.StringVar(&cfg.Shape, "shape", "", "stream chunks as this server sends them: vllm, sglang, tgi, llamacpp or openai (default: OpenAI's layout, no extra fields)")
	groupFlags(cmd,
		flagGroup{"The server", []string{"addr", "served-model", "shape", "seed", "record"}},
		flagGroup{"Responses", []string{"ttft-ms", "itl-ms", "output-tokens", "tokens-per-event", "no-usage", "usage-offset",
			"short-rate", "refuse-exact", "prefix-cache"}},
		flagGroup{"Capacity model", []string{"slots", "prefill-ms", "token-ms", "batch-slowdown", "time-scale"}},
		flagGroup{"Faults", []string{"error-rate", "error-status", "disconnect-rate", "error-event-rate", "stall-rate", "stall"}})
	needFlags(cmd,
		need{[]string{"prefill-ms", "token-ms", "batch-slowdown", "time-scale"}, []string{"slots"}},
		need{[]string{"error-status"}, []string{"error-rate"}},
		need{[]string{"stall"}, []string{"stall-rate"}})
	return cmd
}
