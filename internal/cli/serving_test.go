package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/result"
)

func startMock(t *testing.T, cfg mockserver.Config) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	url, err := mockserver.New(cfg).Start(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	return url
}

func decodeRun(t *testing.T, out string) result.Run {
	t.Helper()
	var r result.Run
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("stdout is not a run: %v\n%s", err, out)
	}
	return r
}

func TestRunOpenAIConcurrency(t *testing.T) {
	url := startMock(t, mockserver.Config{TTFT: workload.Fixed(2), ITL: workload.Fixed(1), OutputTokens: workload.Fixed(8), ErrorRate: 0.2, ErrorStatus: 503, Seed: 3})
	dir := t.TempDir()
	code, out, errOut := runCLI(t, dir, nil, "run", "--openai", url, "--model", "mock", "--concurrency", "1", "4",
		"--requests", "40", "--warmup", "2", "--ramp-up", "20ms", "--format", "json", "--slo", "ttft_ms.p99=1000", "--slo", "tpot_ms.p99=<= 500")
	// Injected 503s fail the scenarios (max_error_rate 0) but are counted by status.
	if code != ExitError {
		t.Fatalf("exit %d, want %d (injected errors); stderr:\n%s", code, ExitError, errOut)
	}
	r := decodeRun(t, out)
	if len(r.Scenarios) != 2 || r.Scenarios[0].Scenario != "concurrency=1" || r.Scenarios[1].Scenario != "concurrency=4" {
		t.Fatalf("scenarios: %+v", r.Scenarios)
	}
	for _, sc := range r.Scenarios {
		for _, m := range []string{"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "goodput_rps", "requests_per_s", "client_cpu_cores", "error_rate"} {
			if _, ok := sc.Metrics[m]; !ok {
				t.Errorf("%s: no %s", sc.Scenario, m)
			}
		}
		kinds := sc.Extra.ErrorsByKind
		if sc.Iterations.Failed == 0 || kinds["http_503"] == 0 {
			t.Errorf("%s: %d failed, kinds %v", sc.Scenario, sc.Iterations.Failed, sc.Extra.ErrorsByKind)
		}
		if sc.Iterations.Measured != 40 || sc.Iterations.Warmup != 2 {
			t.Errorf("%s: iterations %+v", sc.Scenario, sc.Iterations)
		}
		// Every request, warm-up included, is in the request log.
		log := filepath.Join(dir, "benchmark_results", "latest", "requests", "openai__"+sc.Scenario+".jsonl")
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "\n"); n != 42 {
			t.Errorf("%s: %d lines, want 42", log, n)
		}
		if !strings.Contains(string(data), `"error_kind":"http_503"`) || !strings.Contains(string(data), `"token_us":[`) {
			t.Errorf("%s lacks errors or token times", log)
		}
		// The client's own delays of each request, to find those a client_bound warning is about.
		if !strings.Contains(string(data), `"send_delay_us":`) || !strings.Contains(string(data), `"read_delay_us":`) {
			t.Errorf("%s lacks the client's send or read delays", log)
		}
	}
}

func TestRunOpenAIRate(t *testing.T) {
	url := startMock(t, mockserver.Config{OutputTokens: workload.Fixed(4)})
	code, out, errOut := runCLI(t, t.TempDir(), nil, "run", "--openai", url, "--model", "mock", "--rate", "200",
		"--duration", "500ms", "--warmup", "0", "--format", "json", "--no-request-log")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	sc := decodeRun(t, out).Scenarios[0]
	if sc.Scenario != "rate=200" || sc.Iterations.Measured < 60 || sc.Iterations.Measured > 160 {
		t.Errorf("scenario %s measured %d requests, want about 100", sc.Scenario, sc.Iterations.Measured)
	}
	for _, m := range []string{"schedule_lag_ms", "ttft_sched_ms", "e2e_sched_ms", "late_requests"} {
		if _, ok := sc.Metrics[m]; !ok {
			t.Errorf("no %s", m)
		}
	}
}

func TestRunOpenAIUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--openai", "http://127.0.0.1:1/v1"}, "--model"},
		{[]string{"--openai", "http://127.0.0.1:1/v1", "--model", "m", "--rate", "5", "--concurrency", "2"}, "choose one of"},
		{[]string{"--openai", "http://127.0.0.1:1/v1", "--model", "m", "--slo", "ttft=5"}, "--slo"},
		{[]string{"--openai", "http://127.0.0.1:1/v1", "--model", "m", "--input-tokens", "wobble(1)"}, "--input-tokens"},
		{[]string{"--openai", "http://127.0.0.1:1/v1", "--model", "m", "--arrival", "gamma", "--rate", "5"}, "burstiness"},
		{[]string{"--openai", "http://127.0.0.1:1/v1", "--model", "m", "--concurrency", "2", "--ramp-up", "-1s"}, "--ramp-up -1s: a duration cannot be negative"},
	}
	for _, tt := range tests {
		code, _, errOut := runCLI(t, t.TempDir(), nil, append([]string{"run"}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("run %v: exit %d, stderr %q; want %d and %q", tt.args, code, errOut, ExitUsage, tt.want)
		}
	}
	// An unreachable server fails the scenario quickly, with a clear error.
	start := time.Now()
	code, _, errOut := runCLI(t, t.TempDir(), nil, "run", "--openai", "http://127.0.0.1:1/v1", "--model", "m", "--format", "none")
	if code != ExitError || time.Since(start) > 10*time.Second {
		t.Errorf("unreachable server: exit %d after %v", code, time.Since(start))
	}
	_ = errOut
}

// syncBuffer is a bytes.Buffer safe for a command writing while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestMockserverCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- Main(ctx, []string{"mockserver", "--addr", "127.0.0.1:0", "--served-model", "m", "--itl-ms", "uniform(1,2)"}, IO{Stdout: &out, Stderr: &errOut, Env: []string{}})
	}()
	re := regexp.MustCompile(`serving (http://\S+)`)
	var url string
	for i := 0; i < 200 && url == ""; i++ {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	if url == "" {
		t.Fatalf("no address announced; stderr %q", errOut.String())
	}
	resp, err := http.Get(url + "/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("models: %s", resp.Status)
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("mockserver did not stop")
	}
	if code, _, errOut := runCLI(t, "", nil, "mockserver", "--itl-ms", "normal(1"); code != ExitUsage || !strings.Contains(errOut, "--itl-ms") {
		t.Errorf("bad distribution: exit %d, %q", code, errOut)
	}
}
