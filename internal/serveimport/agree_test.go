package serveimport

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
)

// figs reads an imported scenario's figures: inferbench's own (metric.stat), the tool's own
// aggregates (own:NAME) and those computed by a tool's definitions (as:TOOL:NAME).
type figs struct {
	t   *testing.T
	sc  *result.Scenario
	own map[string]float64
	as  map[string][]Figure
}

func importFixture(t *testing.T, file string) figs {
	t.Helper()
	r, ok, err := Read("testdata/"+file, file, Options{Time: time.Unix(0, 0)})
	if err != nil || !ok {
		t.Fatalf("%s: %v (recognised: %v)", file, err, ok)
	}
	f := figs{t: t, sc: &r.Scenarios[0]}
	var imp Imported
	if err := json.Unmarshal(f.sc.Extra.Other[SectionImported], &imp); err != nil {
		t.Fatalf("%s: section imported: %v", file, err)
	}
	f.own = imp.Aggregates
	if raw, ok := f.sc.Extra.Other[SectionReportAs]; ok {
		json.Unmarshal(raw, &f.as)
	}
	return f
}

// ours is inferbench's figure: "ttft_ms.mean", ".p50", ".p99", or a value's name.
func (f figs) ours(name string) float64 {
	f.t.Helper()
	for _, st := range []string{".mean", ".p50", ".p99"} {
		if n := len(name) - len(st); n > 0 && name[n:] == st {
			m, ok := f.sc.Metrics[name[:n]]
			if !ok || m.Summary == nil {
				f.t.Fatalf("%s: no distribution %s", f.sc.ID(), name[:n])
			}
			return map[string]float64{".mean": m.Summary.Mean, ".p50": m.Summary.Median, ".p99": m.Summary.P99}[st]
		}
	}
	m, ok := f.sc.Metrics[name]
	if !ok || m.Value == nil {
		f.t.Fatalf("%s: no value %s", f.sc.ID(), name)
	}
	return *m.Value
}

func (f figs) tool(key string) float64 {
	f.t.Helper()
	v, ok := f.own[key]
	if !ok {
		f.t.Fatalf("%s: the tool's aggregates have no %s", f.sc.ID(), key)
	}
	return v
}

func (f figs) by(tool, name string) float64 {
	f.t.Helper()
	v, ok := lookup(f.as[tool], name)
	if !ok {
		f.t.Fatalf("%s: no %s figure %s", f.sc.ID(), tool, name)
	}
	return v
}

// agree checks that a and b agree within a relative tolerance.
func (f figs) agree(what string, a, b, tol float64) {
	f.t.Helper()
	if math.Abs(a-b) > tol*math.Max(math.Abs(b), 1e-9) {
		f.t.Errorf("%s: %s: %.6g and %.6g differ by more than %.2g%%", f.sc.ID(), what, a, b, 100*tol)
	}
}

// The figures inferbench derives from a vLLM detailed export are vLLM's own where the
// definitions agree: the file keeps vLLM's own per-request TTFT, chunk gaps and latency, and
// vLLM ends a request at its last content chunk, as the file's latency does.
func TestAgreeVLLM(t *testing.T) {
	f := importFixture(t, "vllm/detailed.json")
	for _, c := range []struct{ ours, theirs string }{
		{"ttft_ms.mean", "mean_ttft_ms"}, {"ttft_ms.p50", "median_ttft_ms"}, {"ttft_ms.p99", "p99_ttft_ms"},
		{"tpot_ms.mean", "mean_tpot_ms"}, {"tpot_ms.p99", "p99_tpot_ms"}, {"e2e_ms.mean", "mean_e2el_ms"}, {"e2e_ms.p99", "p99_e2el_ms"},
		// vLLM counts the mockserver's last chunk (empty content, no role) as a token chunk: its
		// ~0.01 ms gap is one of vLLM's ITLs, and the file gives inferbench the same chunks.
		{"itl_ms.mean", "mean_itl_ms"}, {"itl_ms.p99", "p99_itl_ms"},
	} {
		f.agree(c.ours+" vs vLLM's "+c.theirs, f.ours(c.ours), f.tool(c.theirs), 1e-6)
	}
	for _, k := range []string{"mean_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "mean_itl_ms", "std_itl_ms", "mean_tpot_ms", "median_e2el_ms"} {
		f.agree("--report-as vllm "+k, f.by(VLLM, k), f.tool(k), 1e-6)
	}
	// Differ: vLLM divides by its benchmark's duration, from before the first send to after the
	// last response (task start-up and gathering included); inferbench by the measured window,
	// first send to last end: a little shorter, a little higher rate.
	ours, theirs := f.ours("requests_per_s"), f.tool("request_throughput")
	if !(ours > theirs && ours < theirs*1.01) {
		t.Errorf("requests_per_s %.4g vs vLLM's request_throughput %.4g: want ours above, by under 1%% (window vs duration)", ours, theirs)
	}
}

// AIPerf's records give each request's start, TTFT and every chunk gap: inferbench's TTFT and
// per-chunk ITL are AIPerf's; its per-token figures differ, as docs/import.md says.
func TestAgreeAIPerf(t *testing.T) {
	f := importFixture(t, "aiperf/profile_export.jsonl")
	f.agree("ttft_ms.mean vs time_to_first_token.avg", f.ours("ttft_ms.mean"), f.tool("time_to_first_token.avg"), 1e-6)
	f.agree("ttft_ms.p99 vs time_to_first_token.p99", f.ours("ttft_ms.p99"), f.tool("time_to_first_token.p99"), 1e-6)
	// One token a chunk: inferbench's per-token gaps are AIPerf's per-chunk ones.
	f.agree("itl_ms.mean vs inter_chunk_latency.avg", f.ours("itl_ms.mean"), f.tool("inter_chunk_latency.avg"), 1e-6)
	f.agree("--report-as aiperf request_latency.avg", f.by(AIPerf, "request_latency.avg"), f.tool("request_latency.avg"), 1e-6)
	f.agree("--report-as aiperf inter_chunk_latency.p99", f.by(AIPerf, "inter_chunk_latency.p99"), f.tool("inter_chunk_latency.p99"), 1e-6)
	// Differ: AIPerf's inter_token_latency divides by the output tokens its own tokenizer counts
	// in the text (26.7 a request with this tokenizer), inferbench's tpot_ms by the server's
	// usage (16): AIPerf's reads 40% low here.
	if ours, theirs := f.ours("tpot_ms.mean"), f.tool("inter_token_latency.avg"); theirs > 0.8*ours {
		t.Errorf("AIPerf's inter_token_latency.avg %.4g vs tpot_ms %.4g: want AIPerf's lower (its tokenizer's count)", theirs, ours)
	}
	// AIPerf's request_end_ns is its last content response: the end inferbench derives from the
	// file is AIPerf's request_latency (a run of inferbench's own ends after the usage chunk and
	// [DONE]).
	f.agree("e2e_ms.mean vs request_latency.avg", f.ours("e2e_ms.mean"), f.tool("request_latency.avg"), 1e-6)
}

// guidellm keeps each request's start, first and last token and end, not every chunk:
// inferbench's TTFT and latency are guidellm's, and guidellm's per-request ITL and TPOT are
// computed from the same times by its definitions.
func TestAgreeGuideLLM(t *testing.T) {
	f := importFixture(t, "guidellm/benchmarks.json")
	const tol = 1e-4 // guidellm's times are float Unix seconds: 0.24 µs apart at best
	f.agree("ttft_ms.mean", f.ours("ttft_ms.mean"), f.tool("time_to_first_token_ms.successful.mean"), tol)
	f.agree("e2e_ms.mean", f.ours("e2e_ms.mean"), 1e3*f.tool("request_latency.successful.mean"), tol)
	for _, k := range []string{"inter_token_latency_ms.successful.mean", "time_per_output_token_ms.successful.mean"} {
		f.agree("--report-as guidellm "+k, f.by(GuideLLM, k), f.tool(k), tol)
	}
	f.agree("requests_per_s", f.ours("requests_per_s"), f.tool("requests_per_second.successful.mean"), 1e-3)
	if _, ok := f.sc.Metrics["itl_ms"]; ok {
		t.Errorf("itl_ms from a guidellm file, which keeps no chunk's time")
	}
	// Differ: guidellm's percentiles (its median too: 23.84 against 24.03) are values of the
	// sample, not interpolated: its p99 of 24 requests is the largest; inferbench's lies between
	// the two largest.
	if ours, theirs := f.ours("ttft_ms.p99"), f.tool("time_to_first_token_ms.successful.percentiles.p99"); ours > theirs {
		t.Errorf("ttft_ms.p99 %.4g above guidellm's %.4g: want at or below (interpolated)", ours, theirs)
	}
	// Differ: inferbench's tpot_ms ends with the response, guidellm's inter_token_latency_ms at
	// the last token.
	if ours, theirs := f.ours("tpot_ms.mean"), f.tool("inter_token_latency_ms.successful.mean"); ours <= theirs {
		t.Errorf("tpot_ms %.4g at or below guidellm's ITL %.4g: want above (to the response's end)", ours, theirs)
	}
}

// An llm-d report holds the aggregates its converter copied from the tool it converted: the
// report of the vLLM fixture has vLLM's own TTFT and rate.
func TestAgreeLLMD(t *testing.T) {
	v := importFixture(t, "vllm/detailed.json")
	f := importFixture(t, "llm-d/vllm_br0.2.yaml")
	f.agree("ttft_ms.mean", f.ours("ttft_ms.mean"), v.tool("mean_ttft_ms"), 1e-9)
	f.agree("ttft_ms.p99", f.ours("ttft_ms.p99"), v.tool("p99_ttft_ms"), 1e-9)
	f.agree("requests_per_s", f.ours("requests_per_s"), v.tool("request_throughput"), 1e-9)
	// The report's inter_token_latency is vLLM's per-chunk ITL here, guidellm's per-request
	// mean in a report of guidellm: it is kept under its name, never as itl_ms.
	f.agree("inter_token_latency", f.tool("latency.inter_token_latency.mean"), v.tool("mean_itl_ms"), 1e-9)
	for _, m := range []string{"itl_ms", "tpot_ms"} {
		if _, ok := f.sc.Metrics[m]; ok {
			t.Errorf("%s from an llm-d report: its definition is the converted tool's", m)
		}
	}
}
