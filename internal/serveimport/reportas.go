package serveimport

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/inferbench/inferbench/stats"
)

// ReportAs are the tools whose definitions As computes (`--report-as`).
var ReportAs = []string{VLLM, AIPerf, GuideLLM}

// Figure is one figure by another tool's definition, named as that tool names it.
type Figure struct {
	Name  string  `json:"metric"` // the tool's name of the figure
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// acc is one per-request (or per-chunk) quantity of a tool's definition: a bounded distribution
// for its percentiles and exact moments for its mean and (population, as numpy's) std.
type acc struct {
	d        *stats.Dist
	n        int
	mean, m2 float64
	sum      *stats.Summary // the distribution's summary, once asked for
}

// summary is the distribution's summary, computed once (a histogram's is not cheap).
func (a *acc) summary() stats.Summary {
	if a.sum == nil {
		s, _ := a.d.Summary()
		a.sum = &s
	}
	return *a.sum
}

func newAcc() *acc { return &acc{d: stats.NewDist(maxSamples)} }

func (a *acc) add(x float64) {
	a.d.Add(x)
	a.n++
	delta := x - a.mean
	a.mean += delta / float64(a.n)
	a.m2 += delta * (x - a.mean)
}

// quantile is the q-quantile by linear interpolation (numpy's default, which vLLM and AIPerf
// use), exact while the distribution holds every sample.
func (a *acc) quantile(q float64) float64 {
	if a.d.Exact() {
		s := slices.Clone(a.d.Samples())
		slices.Sort(s)
		return stats.Quantile(s, q)
	}
	s := a.summary()
	switch q {
	case 0.5:
		return s.Median
	case 0.9:
		return s.P90
	case 0.95:
		return s.P95
	case 0.99:
		return s.P99
	}
	return math.NaN()
}

func (a *acc) std() float64 {
	if a.n == 0 {
		return 0
	}
	return math.Sqrt(a.m2 / float64(a.n))
}

// Calc computes a scenario's figures by vLLM's, AIPerf's and guidellm's definitions from its
// requests' timestamps, a request at a time (Add), holding bounded distributions only.
type Calc struct {
	ok, failed      int
	in, out         int
	first, last     time.Time // the window: first send, last end
	lastChunk       time.Time // the last content chunk of any request (AIPerf's window end)
	q               map[string]*acc
	tokens, chunked bool
}

// NewCalc returns an empty Calc.
func NewCalc() *Calc { return &Calc{q: map[string]*acc{}} }

func (c *Calc) add(name string, v float64) {
	a, ok := c.q[name]
	if !ok {
		a = newAcc()
		c.q[name] = a
	}
	a.add(v)
}

// Add adds one request.
func (c *Calc) Add(r Request) {
	if r.Err != "" {
		c.failed++
		return
	}
	c.ok++
	end := r.Start.Add(r.End)
	if c.first.IsZero() || r.Start.Before(c.first) {
		c.first = r.Start
	}
	if end.After(c.last) {
		c.last = end
	}
	c.in += r.InputTokens
	n := r.OutputTokens
	if n == 0 {
		n = len(r.Chunks)
	}
	c.out += n
	if r.FirstToken <= 0 && len(r.Chunks) == 0 {
		return
	}
	// The last content chunk: vLLM's and AIPerf's request end (the usage chunk and [DONE]
	// after it do not count); the response's end when the tool kept no chunks.
	lastTok := r.End
	if r.LastToken > 0 {
		lastTok = r.LastToken
	}
	if len(r.Chunks) > 0 {
		lastTok = r.Chunks[len(r.Chunks)-1]
		c.chunked = true
	}
	if t := r.Start.Add(lastTok); t.After(c.lastChunk) {
		c.lastChunk = t
	}
	ttft := ms(r.FirstToken)
	c.add("ttft", ttft)
	c.add("latency", ms(lastTok))
	c.add("e2e", ms(r.End))
	for i := 1; i < len(r.Chunks); i++ {
		c.add("chunk_gap", ms(r.Chunks[i]-r.Chunks[i-1]))
	}
	if len(r.Chunks) > 1 {
		c.add("ttst", ms(r.Chunks[1]-r.Chunks[0]))
	}
	if n > 1 {
		c.add("decode_per_token", (ms(lastTok)-ttft)/float64(n-1)) // vLLM TPOT, AIPerf ITL, guidellm ITL
		if d := ms(lastTok) - ttft; d > 0 {
			c.add("decode_rate_user", float64(n-1)/d*1e3) // AIPerf output_token_throughput_per_user
		}
	}
	if n > 0 {
		c.add("per_token_incl_first", ms(lastTok)/float64(n)) // guidellm time_per_output_token_ms
	}
	c.add("output_tokens", float64(n))
	if r.InputTokens > 0 {
		c.add("input_tokens", float64(r.InputTokens))
	}
}

// rate divides x by the seconds from the first send to end; NaN for an empty window.
func (c *Calc) rate(x float64, end time.Time) float64 {
	if w := end.Sub(c.first).Seconds(); w > 0 {
		return x / w
	}
	return math.NaN()
}

// stat adds a quantity's statistics as the tool names them: name(q, stat) gives the name.
func (c *Calc) stat(out *[]Figure, q string, unit string, stat []string, name func(stat string) string) {
	a, ok := c.q[q]
	if !ok || a.n == 0 {
		return
	}
	for _, s := range stat {
		var v float64
		switch s {
		case "mean":
			v = a.mean
		case "std":
			v = a.std()
		case "min":
			v = a.summary().Min
		case "max":
			v = a.summary().Max
		default: // pNN or median
			p := strings.TrimPrefix(s, "p")
			if s == "median" {
				p = "50"
			}
			var x float64
			fmt.Sscan(p, &x)
			v = a.quantile(x / 100)
		}
		*out = append(*out, Figure{Name: name(s), Value: v, Unit: unit})
	}
}

// As returns the figures of the requests added by tool's definitions (VLLM, AIPerf, GuideLLM),
// named as the tool names them; nil for another tool.
func (c *Calc) As(tool string) []Figure {
	var out []Figure
	switch tool {
	case VLLM:
		out = c.vllm()
	case AIPerf:
		out = c.aiperf()
	case GuideLLM:
		out = c.guidellm()
	}
	return slices.DeleteFunc(out, func(f Figure) bool { return math.IsNaN(f.Value) || math.IsInf(f.Value, 0) })
}

// All returns As of every tool of ReportAs, by tool.
func (c *Calc) All() map[string][]Figure {
	m := map[string][]Figure{}
	for _, t := range ReportAs {
		if f := c.As(t); len(f) > 0 {
			m[t] = f
		}
	}
	return m
}

// vllm: `vllm bench serve`'s calculate_metrics (vllm/benchmarks/serve.py, 0.33.0). ITL is one
// sample per chunk; TPOT and E2EL end at the last content chunk; throughputs divide by the
// benchmark's duration, here the first send to the last end.
func (c *Calc) vllm() []Figure {
	out := []Figure{{"completed", float64(c.ok), "requests"}, {"failed", float64(c.failed), "requests"},
		{"total_input_tokens", float64(c.in), "tokens"}, {"total_output_tokens", float64(c.out), "tokens"},
		{"duration", c.last.Sub(c.first).Seconds(), "s"},
		{"request_throughput", c.rate(float64(c.ok), c.last), "req/s"},
		{"output_throughput", c.rate(float64(c.out), c.last), "tok/s"},
		{"total_token_throughput", c.rate(float64(c.in+c.out), c.last), "tok/s"}}
	st := []string{"mean", "median", "std", "p90", "p95", "p99"}
	for _, m := range []struct{ q, name string }{{"ttft", "ttft"}, {"decode_per_token", "tpot"}, {"chunk_gap", "itl"}, {"latency", "e2el"}} {
		c.stat(&out, m.q, "ms", st, func(s string) string { return s + "_" + m.name + "_ms" })
	}
	return out
}

// aiperf: AIPerf's record metrics (aiperf/metrics/types, 0.13.0): request_latency ends at the
// last content response; inter_token_latency is per request (vLLM's TPOT), inter_chunk_latency
// each gap; throughputs divide by the benchmark duration, first send to last response.
func (c *Calc) aiperf() []Figure {
	st := []string{"avg", "min", "max", "p50", "p90", "p95", "p99", "std"}
	var out []Figure
	for _, m := range []struct{ q, name, unit string }{{"ttft", "time_to_first_token", "ms"}, {"ttst", "time_to_second_token", "ms"},
		{"decode_per_token", "inter_token_latency", "ms"}, {"chunk_gap", "inter_chunk_latency", "ms"}, {"latency", "request_latency", "ms"},
		{"decode_rate_user", "output_token_throughput_per_user", "tokens/sec/user"}, {"output_tokens", "output_sequence_length", "tokens"},
		{"input_tokens", "input_sequence_length", "tokens"}} {
		c.stat(&out, m.q, m.unit, aiperfStats(st), func(s string) string { return m.name + "." + aiperfName(s) })
	}
	end := c.lastChunk
	if end.IsZero() {
		end = c.last
	}
	out = append(out, Figure{"request_count", float64(c.ok), "requests"}, Figure{"error_request_count", float64(c.failed), "requests"},
		Figure{"benchmark_duration", end.Sub(c.first).Seconds(), "sec"},
		Figure{"request_throughput", c.rate(float64(c.ok), end), "requests/sec"},
		Figure{"output_token_throughput", c.rate(float64(c.out), end), "tokens/sec"})
	return out
}

func aiperfStats(st []string) []string {
	out := make([]string, len(st))
	for i, s := range st {
		if s == "avg" {
			s = "mean"
		}
		out[i] = s
	}
	return out
}

func aiperfName(s string) string {
	if s == "mean" {
		return "avg"
	}
	return s
}

// guidellm: guidellm's GenerativeRequestStats (guidellm/schemas/base/request_stats.py, 0.8.1),
// the successful requests': inter_token_latency_ms is per request (last token − first) /
// (tokens − 1), time_per_output_token_ms (last token − start) / tokens including the first;
// request_latency is in seconds to the response's end; requests_per_second's mean is the
// requests over the benchmark's window.
func (c *Calc) guidellm() []Figure {
	st := []string{"mean", "median", "std", "p90", "p95", "p99"}
	var out []Figure
	for _, m := range []struct {
		q, name, unit string
		scale         float64
	}{{"ttft", "time_to_first_token_ms", "ms", 1}, {"decode_per_token", "inter_token_latency_ms", "ms", 1},
		{"per_token_incl_first", "time_per_output_token_ms", "ms", 1}, {"e2e", "request_latency", "s", 1e-3},
		{"output_tokens", "output_token_count", "tokens", 1}, {"input_tokens", "prompt_token_count", "tokens", 1}} {
		var fs []Figure
		c.stat(&fs, m.q, m.unit, st, func(s string) string { return m.name + ".successful." + guidellmName(s) })
		for i := range fs {
			fs[i].Value *= m.scale
		}
		out = append(out, fs...)
	}
	out = append(out, Figure{"request_totals.successful", float64(c.ok), "requests"}, Figure{"request_totals.errored", float64(c.failed), "requests"},
		Figure{"requests_per_second.successful.mean", c.rate(float64(c.ok), c.last), "req/s"},
		Figure{"output_tokens_per_second.successful.mean", c.rate(float64(c.out), c.last), "tok/s"})
	return out
}

func guidellmName(s string) string {
	switch s {
	case "std":
		return "std_dev"
	case "median", "mean":
		return s
	}
	return "percentiles." + s
}
