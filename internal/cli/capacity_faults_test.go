package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/capacity"
	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/result"
)

// capacityRun runs `inferbench capacity` against url with a short search and returns its exit
// code, stderr, stdout and the run.json it wrote.
func capacityRun(t *testing.T, url string, extra ...string) (int, string, string, result.Run) {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"capacity", "--openai", url, "--model", "mock", "--output-tokens", "4",
		"--slo", "ttft_ms.p90=500", "--start-rate", "40", "--min-requests", "40", "--max-requests", "80",
		"--warmup-requests", "5", "--max-steps", "12", "--no-store"}, extra...)
	code, out, errOut := runCLI(t, dir, nil, args...)
	b, err := os.ReadFile(filepath.Join(dir, "benchmark_results", "latest", "run.json"))
	if err != nil {
		t.Fatalf("no run.json (exit %d): %v\n%s", code, err, errOut)
	}
	return code, errOut, out, decodeRun(t, string(b))
}

// TestCapacityServerFaults: a search against a server that is killed mid-search, answers HTTP
// 500 to every request, streams 200s with no content, or accepts and never answers a request
// (with --timeout) stops within a bound, with exit 1 and an error naming the server and what its
// requests got, and neither prints nor stores a capacity; run.json keeps the steps it took.
func TestCapacityServerFaults(t *testing.T) {
	models := func(w http.ResponseWriter) {
		io.WriteString(w, `{"data":[{"id":"mock","owned_by":"inferbench"}]}`)
	}
	fake := func(t *testing.T, chat http.HandlerFunc) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/models" {
				models(w)
				return
			}
			io.Copy(io.Discard, r.Body) // the server sees the client go only once it has read the body
			chat(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/v1"
	}
	for _, tc := range []struct {
		name  string
		url   func(t *testing.T) string
		flags []string
		want  []string // in stderr
		steps bool     // run.json keeps at least one step
	}{
		// the mockserver stops after the first step's requests: the next are refused
		{name: "killed mid-search", url: func(t *testing.T) string {
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			s := mockserver.New(mockserver.Config{OutputTokens: workload.Fixed(4)})
			url, err := s.Start(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				for ctx.Err() == nil && s.Stats().Completed < 100 {
					time.Sleep(5 * time.Millisecond)
				}
				cancel()
			}()
			return url
		}, want: []string{"is gone (connections refused)", "connection refused ×"}, steps: true},
		{name: "HTTP 500", url: func(t *testing.T) string {
			return fake(t, func(w http.ResponseWriter, _ *http.Request) { http.Error(w, `{"error":{"message":"boom"}}`, 500) })
		}, want: []string{"fails every request", "http_500 ×", "boom"}},
		{name: "empty streams", url: func(t *testing.T) string {
			return fake(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
			})
		}, want: []string{"fails every request", "no output (no tokens) ×"}},
		{name: "never answers", url: func(t *testing.T) string {
			return fake(t, func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		}, flags: []string{"--timeout", "1s"}, want: []string{"fails every request", "timeout ×"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url(t)
			start := time.Now()
			code, errOut, out, r := capacityRun(t, url, tc.flags...)
			if d := time.Since(start); d > 60*time.Second {
				t.Errorf("the search ended after %v", d)
			}
			if code != ExitError {
				t.Errorf("exit %d, want %d", code, ExitError)
			}
			sc := r.Scenarios[0]
			for _, w := range append(tc.want, "the server at "+url) {
				if !strings.Contains(sc.Error, w) || !strings.Contains(out, w) {
					t.Errorf("run.json's error and stdout lack %q:\n%s\n%s", w, sc.Error, out)
				}
			}
			if !strings.Contains(errOut, "scenarios failed") {
				t.Errorf("stderr:\n%s", errOut)
			}
			for _, m := range []string{"capacity_rps", "capacity_lower_rps"} {
				if _, ok := sc.Metrics[m]; ok {
					t.Errorf("run.json stores %s %+v", m, sc.Metrics[m])
				}
			}
			if strings.Contains(out, "req/s (95% lower bound") {
				t.Errorf("stdout prints a capacity:\n%s", out)
			}
			var res capacity.Result
			if raw, ok := sc.Extra.Other[capacity.Section]; ok {
				if err := json.Unmarshal(raw, &res); err != nil {
					t.Fatal(err)
				}
			}
			if tc.steps && len(res.Steps) == 0 {
				t.Errorf("run.json keeps no step of the search: %s", sc.Extra.Other[capacity.Section])
			}
		})
	}
}

// TestCapacityStalledModels: a server that accepts and never answers, /v1/models included, ends
// `capacity --timeout 1s` in about its timeout with an error naming the probe and its deadline:
// it waited 30 s for /v1/models, then sent on (no exit in 75 s).
func TestCapacityStalledModels(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer srv.Close()
	start := time.Now()
	code, _, out, r := capacityRun(t, srv.URL+"/v1", "--timeout", "1s")
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("ended after %v with --timeout 1s", d)
	}
	want := "exact-output probe's GET " + srv.URL + "/v1/models got no answer within 1s, the run's timeout"
	if code != ExitError || !strings.Contains(r.Scenarios[0].Error, want) || !strings.Contains(out, want) {
		t.Errorf("exit %d, error %q, stdout:\n%s", code, r.Scenarios[0].Error, out)
	}
}

// TestCapacitySLONotFinite: a limit of Inf, NaN or below 0 is refused when the flag is read
// (exit 2, naming --slo); Inf was accepted and run.json then lost the search's steps.
func TestCapacitySLONotFinite(t *testing.T) {
	for _, v := range []string{"Inf", "+Inf", "NaN", "-5", "0"} {
		code, _, errOut := runCLI(t, t.TempDir(), nil, "capacity", "--openai", "http://127.0.0.1:9/v1", "--model", "m", "--slo", "ttft_ms.p90="+v)
		if code != ExitUsage || !strings.Contains(errOut, "--slo ttft_ms.p90="+v) || !strings.Contains(errOut, "above 0 and finite") {
			t.Errorf("--slo ttft_ms.p90=%s: exit %d, stderr %s", v, code, errOut)
		}
	}
}
