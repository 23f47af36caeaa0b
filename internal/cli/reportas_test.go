package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/serveimport"
	"github.com/inferbench/inferbench/internal/workload"
)

// report --report-as computes a run's figures by another tool's definitions from its request
// log, named as that tool names them. The server sends two tokens a chunk, 4 ms apart: vLLM's
// ITL is one sample per chunk (4 ms), inferbench's itl_ms one per token (2 ms); the TTFT and
// the throughputs are the same timestamps' by both definitions.
func TestReportAsFromRequestLog(t *testing.T) {
	url := startMock(t, mockserver.Config{TTFT: workload.Fixed(5), ITL: workload.Fixed(4), OutputTokens: workload.Fixed(16), TokensPerEvent: 2, Seed: 1})
	dir := t.TempDir()
	code, out, errOut := runCLI(t, dir, nil, "run", "--openai", url, "--model", "mock", "--concurrency", "2", "--requests", "12", "--warmup", "0", "--no-store", "--format", "json")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	sc := decodeRun(t, out).Scenarios[0]
	code, js, errOut := runCLI(t, dir, nil, "report", "latest", "--report-as", "vllm,aiperf", "--format", "json")
	if code != 0 {
		t.Fatalf("report --report-as: exit %d\n%s", code, errOut)
	}
	var got map[string]map[string][]serveimport.Figure
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	figs := got[sc.ID()]
	value := func(tool, name string) float64 {
		for _, f := range figs[tool] {
			if f.Name == name {
				return f.Value
			}
		}
		t.Fatalf("no %s %s in %v", tool, name, figs[tool])
		return 0
	}
	ttft := sc.Metrics["ttft_ms"].Summary.Mean
	if v := value("vllm", "mean_ttft_ms"); v < ttft-0.01 || v > ttft+0.01 {
		t.Errorf("vllm mean_ttft_ms %.4g, run.json ttft_ms mean %.4g: want the same", v, ttft)
	}
	itl, chunk := sc.Metrics["itl_ms"].Summary.Mean, value("vllm", "mean_itl_ms")
	if chunk < 1.8*itl || chunk > 2.2*itl {
		t.Errorf("vllm mean_itl_ms %.4g (per chunk), itl_ms mean %.4g (per token): want twice", chunk, itl)
	}
	if v := value("aiperf", "inter_chunk_latency.avg"); v < chunk-0.01 || v > chunk+0.01 {
		t.Errorf("aiperf inter_chunk_latency.avg %.4g: want vLLM's per-chunk ITL %.4g", v, chunk)
	}
	if value("vllm", "completed") != 12 {
		t.Errorf("vllm completed %v, want 12", value("vllm", "completed"))
	}
	code, text, _ := runCLI(t, dir, nil, "report", "latest", "--report-as", "guidellm")
	if code != 0 || !strings.Contains(text, "from the request log's timestamps") || !strings.Contains(text, "time_to_first_token_ms.successful.mean") {
		t.Errorf("report --report-as guidellm: exit %d\n%s", code, text)
	}
	if code, _, errOut := runCLI(t, dir, nil, "report", "latest", "--report-as", "genai-perf"); code != ExitUsage || !strings.Contains(errOut, `--report-as "genai-perf": want vllm, aiperf, guidellm`) {
		t.Errorf("--report-as genai-perf: exit %d, %s", code, errOut)
	}
}
