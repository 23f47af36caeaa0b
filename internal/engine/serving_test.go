package engine_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/engine"
	_ "github.com/inferbench/inferbench/internal/kind/openai"
	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/suite"
)

func TestServingScenario(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, err := mockserver.New(mockserver.Config{TTFT: workload.Fixed(1), ITL: workload.Fixed(2), OutputTokens: workload.Fixed(6), TokensPerEvent: 2}).Start(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	scs := scenarios(t, fmt.Sprintf(`name: srv
subject: {kind: openai, url: %q, model: mock}
matrix:
  concurrency: [1, 4]
load: {mode: concurrency, warmup_iterations: 2, measurement_iterations: 30, slo: {ttft_ms.p99: 10000, e2e_ms.p50: 0.001}}
`, url))
	logs := t.TempDir()
	run := runAll(t, engine.New(engine.WithRequestLog(logs)), scs)
	if run.Summary.Succeeded != 2 {
		t.Fatalf("summary %+v: %+v", run.Summary, run.Scenarios)
	}
	for _, sc := range run.Scenarios {
		// No request can end within a microsecond: goodput is 0 and the SLOs do not hold.
		if v := *sc.Metrics["goodput_rps"].Value; v != 0 {
			t.Errorf("%s: goodput %v with an impossible SLO", sc.Scenario, v)
		}
		slo := sc.Extra.SLO
		if slo == nil || slo.Hold != false {
			t.Errorf("%s: slo %v", sc.Scenario, slo)
		}
		// Three events of two tokens each, 2 ms apart: ITL has two samples per gap, up to 120.
		// Events that arrive in one read are one delivery (fewer gaps, as many tokens each): on a
		// loaded machine whole requests arrive in one read, so there is no lower bound but one gap.
		if itl := sc.Metrics["itl_ms"].Summary; itl == nil || itl.N > 30*2*2 || itl.N%2 != 0 || itl.N < 2 {
			t.Errorf("%s: ITL %+v, want an even count of 2 to 120 samples", sc.Scenario, itl)
		}
		data, err := os.ReadFile(filepath.Join(logs, "srv__"+sc.Scenario+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "\n"); n != 32 || !strings.Contains(string(data), `"tokens":[2,2,2]`) {
			t.Errorf("%s: %d log lines:\n%.300s", sc.Scenario, n, data)
		}
	}
}

// TestServerBlock checks the server's lifecycle: started for the first scenario, shared while the
// rendered command is the same, replaced when it changes, stopped when the run ends.
func TestServerBlock(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3 for a stand-in server")
	}
	scs := scenarios(t, fmt.Sprintf(`name: withserver
server:
  command: [%q, -m, http.server, "{port}", --bind, 127.0.0.1, --directory, "{dir}"]
  ready: http://127.0.0.1:{port}/
  dir: %q
subject: {kind: mock, latency_ms: 1}
matrix:
  dir: [%q, %q]
  batch_size: [1, 2]
load: {warmup_iterations: 0, measurement_iterations: 2}
`, py, t.TempDir(), t.TempDir(), t.TempDir()))
	logs := t.TempDir()
	run := runAll(t, engine.New(engine.WithServerLogs(logs), engine.WithChecker(&suite.Checker{EnableMock: true})), scs)
	if run.Summary.Succeeded != 4 {
		t.Fatalf("summary %+v: %+v", run.Summary, run.Scenarios)
	}
	var reused []bool
	var commands []string
	for _, sc := range run.Scenarios {
		info := sc.Extra.Server
		reused = append(reused, info.Reused)
		commands = append(commands, info.Command)
	}
	if fmt.Sprint(reused) != "[false true false true]" {
		t.Errorf("reused %v, want [false true false true]", reused)
	}
	// The last server is gone once the run is over.
	port := strings.Fields(commands[3])[3]
	if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
		c.Close()
		t.Errorf("server on port %s still up after the run", port)
	}
	entries, _ := os.ReadDir(logs)
	if len(entries) != 2 {
		t.Errorf("%d server logs, want 2 (one per server started)", len(entries))
	}
}

func TestServerBlockFailure(t *testing.T) {
	scs := scenarios(t, fmt.Sprintf(`name: badserver
server: {command: [/nonexistent/server, --port, "{port}"], ready: "tcp://127.0.0.1:{port}", dir: %q}
subject: {kind: mock, latency_ms: 1}
load: {warmup_iterations: 0, measurement_iterations: 2}
`, t.TempDir()))
	run := runAll(t, engine.New(engine.WithChecker(&suite.Checker{EnableMock: true})), scs)
	if run.Summary.Failed != 1 || !strings.Contains(run.Scenarios[0].Error, "/nonexistent/server") {
		t.Errorf("summary %+v, error %q", run.Summary, run.Scenarios[0].Error)
	}
}

// TestEmptyStreamsWarn: a server whose streams end with no content (a role chunk, usage, [DONE])
// answers every request "successfully", and TTFT, ITL and token rates have nothing to describe.
// Before, the scenario was ok with no word of it; now a warning says how many requests streamed
// nothing and what the server claimed they held.
func TestEmptyStreamsWarn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}`+"\n\n")
		io.WriteString(w, `data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3}}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	scs := scenarios(t, fmt.Sprintf(`name: empty
subject: {kind: openai, url: %q, model: m}
load: {mode: concurrency, concurrency: 2, warmup_iterations: 0, measurement_iterations: 6}
`, srv.URL))
	run := runAll(t, engine.New(), scs)
	sc := run.Scenarios[0]
	w := strings.Join(sc.Warnings, "\n")
	if !strings.Contains(w, "6 of 6 successful streamed requests ended with no content") || !strings.Contains(w, "reported 18 output tokens") {
		t.Errorf("warnings %q do not say the streams were empty", w)
	}
	if _, ok := sc.Metrics["ttft_ms"]; ok {
		t.Errorf("ttft_ms from streams with no content: %+v", sc.Metrics["ttft_ms"])
	}
}
