package cli

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/engine"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject/openai"
	"github.com/inferbench/inferbench/suite"
	"github.com/inferbench/inferbench/workload"
)

func init() {
	quickRuns = append(quickRuns, func() QuickRun { return &openaiQuick{} })
	runExtensions = append(runExtensions, func() RunExtension { return &requestLogExt{} })
	isNumber := func(s string) bool { _, err := strconv.ParseFloat(s, 64); return err == nil }
	listFlags["--concurrency"] = isNumber
	listFlags["--rate"] = isNumber
}

// openaiQuick is `inferbench run --openai URL --model m --concurrency 1,8,64 --requests 500`: an
// LLM server benchmark without a definition. Several concurrencies or rates make a matrix axis,
// one scenario each.
type openaiQuick struct {
	url, endpoint, apiKeyEnv     string
	concurrency                  []int
	rates                        []float64
	arrival                      string
	burstiness                   float64
	duration, rampUp             time.Duration
	maxConcurrency               int
	requests                     int
	seed                         uint64
	slos                         []string
	sweep, offline               bool
	sweepSteps, sloSearch        int
	inputTokens, outputTokens    string
	prompts                      string
	sharedPrefix                 int
	noStream, ignoreEOS, noUsage bool
}

func (q *openaiQuick) Flags(f *pflag.FlagSet) {
	f.StringVar(&q.url, "openai", "", "benchmark an OpenAI-compatible server at this base URL (e.g. http://127.0.0.1:8000/v1; no definition needed; --model names the model)")
	f.StringVar(&q.endpoint, "endpoint", "chat", "with --openai: chat or completions")
	f.StringVar(&q.apiKeyEnv, "api-key-env", "", "with --openai: environment variable holding the API key (never written anywhere)")
	f.IntSliceVar(&q.concurrency, "concurrency", nil, "with --openai: closed loop with this many requests in flight; several make one scenario each: --concurrency 1,8,64")
	f.Float64SliceVar(&q.rates, "rate", nil, "with --openai: open loop at this many requests/s; several make one scenario each: --rate 5,10,20")
	f.StringVar(&q.arrival, "arrival", "poisson", "with --rate: arrival process: poisson, constant or gamma")
	f.Float64Var(&q.burstiness, "burstiness", 0, "with --arrival gamma: the shape (1 is poisson, below 1 burstier)")
	f.DurationVar(&q.duration, "duration", 0, "with --rate: send measured requests for this long (instead of --requests)")
	f.DurationVar(&q.rampUp, "ramp-up", 0, "with --concurrency or --offline: start the workers spread over this long instead of all at once")
	f.IntVar(&q.maxConcurrency, "max-concurrency", 0, "with --rate, --sweep or --offline: cap on requests in flight")
	f.IntVar(&q.requests, "requests", 0, "with --openai: measured requests per scenario (or per sweep step); default 100")
	f.Uint64Var(&q.seed, "seed", 0, "with --openai: seed of the arrival schedule and the prompts")
	f.StringArrayVar(&q.slos, "slo", nil, "with --openai: service-level objective metric.stat=limit, e.g. --slo ttft_ms.p99=500 (repeatable); goodput counts requests meeting all")
	f.BoolVar(&q.sweep, "sweep", false, "with --openai: sweep from synchronous to maximum throughput (and, with --slo-search, find the highest rate meeting the SLOs)")
	f.IntVar(&q.sweepSteps, "sweep-steps", 4, "with --sweep: rates between the synchronous and the maximum")
	f.IntVar(&q.sloSearch, "slo-search", 0, "with --sweep and --slo: bisection probes for the highest rate whose SLOs hold")
	f.BoolVar(&q.offline, "offline", false, "with --openai: send every request at once (--max-concurrency in flight)")
	f.StringVar(&q.inputTokens, "input-tokens", "", "with --openai: synthetic prompt length, a number or a distribution: lognormal(mean=550,std=150)")
	f.StringVar(&q.outputTokens, "output-tokens", "", "with --openai: max_tokens per request, a number or a distribution")
	f.StringVar(&q.prompts, "prompts", "", "with --openai: prompts from a JSONL or ShareGPT file instead of synthetic ones")
	f.IntVar(&q.sharedPrefix, "shared-prefix", 0, "with --openai: tokens of prefix shared by every prompt")
	f.BoolVar(&q.noStream, "no-stream", false, "with --openai: ask for whole responses (no TTFT or ITL)")
	f.BoolVar(&q.ignoreEOS, "ignore-eos", false, "with --openai: ask the server to generate exactly max_tokens (vLLM, SGLang)")
	f.BoolVar(&q.noUsage, "no-include-usage", false, "with --openai: do not send stream_options.include_usage (servers that reject it)")
}

func (q *openaiQuick) Benchmarks(o *IO, sel *selection) ([]*suite.Benchmark, error) {
	if q.url == "" {
		return nil, nil
	}
	if len(sel.filter.Model) != 1 {
		return nil, usageErr("--openai: give the model the server serves with --model (GET %s/models lists them)", strings.TrimSuffix(q.url, "/"))
	}
	model := sel.filter.Model[0]
	cfg := &openai.Config{URL: q.url, Model: model, Endpoint: q.endpoint, APIKeyEnv: q.apiKeyEnv, IgnoreEOS: q.ignoreEOS}
	if q.noStream {
		f := false
		cfg.Stream = &f
	}
	if q.noUsage {
		f := false
		cfg.IncludeUsage = &f
	}
	wl := workload.Config{Seed: q.seed, File: q.prompts, SharedPrefix: q.sharedPrefix}
	for flag, p := range map[string]struct {
		s string
		d *workload.Dist
	}{"--input-tokens": {q.inputTokens, &wl.InputTokens}, "--output-tokens": {q.outputTokens, &wl.OutputTokens}} {
		if p.s == "" {
			continue
		}
		d, err := workload.ParseDist(p.s)
		if err != nil {
			return nil, usageErr("%s: %v", flag, err)
		}
		*p.d = d
	}
	cfg.Workload = wl

	lc := load.Config{Seed: q.seed, MaxConcurrency: q.maxConcurrency, Duration: q.duration, RampUp: q.rampUp}
	if q.requests > 0 {
		lc.MeasurementIterations = &q.requests
	} else {
		n := 100
		lc.MeasurementIterations = &n
	}
	slo, err := parseSLOFlags(q.slos)
	if err != nil {
		return nil, err
	}
	lc.SLO = slo
	var axes []suite.Axis
	modes := 0
	for _, on := range []bool{len(q.concurrency) > 0, len(q.rates) > 0, q.sweep, q.offline} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return nil, usageErr("--openai: choose one of --concurrency, --rate, --sweep and --offline")
	}
	switch {
	case len(q.rates) > 0:
		lc.Mode, lc.Arrival, lc.Burstiness = load.ModeRate, q.arrival, q.burstiness
		axes = append(axes, suite.Axis{Name: "rate", Values: anys(q.rates)})
	case q.sweep:
		lc.Mode, lc.Arrival, lc.Burstiness = load.ModeSweep, q.arrival, q.burstiness
		lc.Sweep = &load.SweepConfig{Steps: q.sweepSteps, Search: q.sloSearch}
	case q.offline:
		lc.Mode = load.ModeOffline
	default:
		lc.Mode = load.ModeConcurrency
		c := q.concurrency
		if len(c) == 0 {
			c = []int{1}
		}
		axes = append(axes, suite.Axis{Name: "concurrency", Values: anys(c)})
	}
	probe := lc
	if lc.Mode == load.ModeRate {
		probe.Rate = q.rates[0]
	}
	if err := probe.Validate(); err != nil {
		return nil, usageErr("--openai: %v", err)
	}
	return []*suite.Benchmark{{
		Name: "openai", Model: model, Category: "performance", Tags: []string{"llm", "serving"},
		Description: "OpenAI-compatible server at " + q.url,
		Kind:        "openai", Config: cfg, File: "(command line)", Dir: workDir(o), Axes: axes, Load: lc,
	}}, nil
}

// parseSLOFlags reads --slo metric.stat=limit values.
func parseSLOFlags(flags []string) (map[string]float64, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	m := map[string]float64{}
	for _, s := range flags {
		k, v, ok := strings.Cut(s, "=")
		limit, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), "<=")), 64)
		if !ok || err != nil {
			return nil, usageErr("--slo %q: want metric.stat=limit, e.g. ttft_ms.p99=500", s)
		}
		m[strings.TrimSpace(k)] = limit
	}
	if _, err := load.ParseSLOs(m); err != nil {
		return nil, usageErr("--slo: %v", err)
	}
	return m, nil
}

func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// requestLogExt writes requests/<scenario>.jsonl for serving scenarios, and servers/<scenario>.log
// for the servers definitions start.
type requestLogExt struct{ off bool }

func (e *requestLogExt) Flags(f *pflag.FlagSet) {
	f.BoolVar(&e.off, "no-request-log", false, "do not write requests/<scenario>.jsonl (each serving request's raw timestamps)")
}

func (e *requestLogExt) Start(_ context.Context, _ *IO, dir string) ([]engine.Option, error) {
	if e.off {
		return []engine.Option{engine.WithServerLogs(filepath.Join(dir, "servers"))}, nil
	}
	return []engine.Option{engine.WithRequestLog(filepath.Join(dir, "requests")), engine.WithServerLogs(filepath.Join(dir, "servers"))}, nil
}

func (e *requestLogExt) Finish(context.Context, *IO, string, *result.Run) (int, error) {
	return ExitOK, nil
}
