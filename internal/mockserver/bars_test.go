package mockserver_test

// The serving bars of docs/performance.md ("Serving"), measured through the whole engine (the
// openai subject, a load driver, the collector with every serving metric) against an in-process
// mockserver over loopback HTTP. Run them with
//
//	go test ./mockserver -run '^$' -bench Serving -benchtime 1x
//
// Each reports its figures as benchmark metrics; b.N is ignored beyond 1.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/internal/kind/openai"
	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// scenario runs one serving scenario through the engine against ms.
func scenario(b *testing.B, ms *mockserver.Server, lc load.Config, requests int, requestLog string) result.Scenario {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, err := ms.Start(ctx, "")
	if err != nil {
		b.Fatal(err)
	}
	return run(b, url, lc, requests, requestLog)
}

// scenarioAt runs one serving scenario against the server at url.
func scenarioAt(b *testing.B, url string, lc load.Config, requests int) result.Scenario {
	b.Helper()
	return run(b, url, lc, requests, "")
}

func run(b *testing.B, url string, lc load.Config, requests int, requestLog string) result.Scenario {
	b.Helper()
	ctx := context.Background()
	if lc.WarmupIterations == nil {
		zero := 0
		lc.WarmupIterations = &zero
	}
	lc.MeasurementIterations = &requests
	bench := &suite.Benchmark{Name: "bar", Kind: "openai", Dir: ".", Load: lc,
		Config: &openai.Config{URL: url, Model: "mock", Workload: workload.Config{Seed: 1}}}
	sc := &suite.Scenario{Benchmark: bench, Name: "default", Params: map[string]any{"concurrency": lc.Concurrency}}
	var opts []engine.Option
	if s := os.Getenv("INFERBENCH_BAR_MAX_SAMPLES"); s != "" {
		n, _ := strconv.Atoi(s)
		opts = append(opts, engine.WithMaxSamples(n))
	}
	if requestLog != "" {
		opts = append(opts, engine.WithRequestLog(requestLog))
	}
	r := engine.New(opts...).RunScenario(ctx, sc)
	if r.Status != result.StatusOK {
		b.Fatalf("scenario %s: %s", r.Status, r.Error)
	}
	return r
}

func value(b *testing.B, r result.Scenario, name string) float64 {
	b.Helper()
	m, ok := r.Metrics[name]
	if !ok {
		b.Fatalf("no metric %s", name)
	}
	if m.Value != nil {
		return *m.Value
	}
	return m.Summary.Median
}

// BenchmarkServingThroughput: closed loop at concurrency 64, 32 one-token content events per
// response, every metric and the per-request log on.
func BenchmarkServingThroughput(b *testing.B) {
	ms := mockserver.New(mockserver.Config{OutputTokens: workload.Fixed(32)})
	r := scenario(b, ms, load.Config{Mode: load.ModeConcurrency, Concurrency: 64}, 100000, b.TempDir())
	b.ReportMetric(value(b, r, "requests_per_s"), "req/s")
	b.ReportMetric(value(b, r, "steady_requests_per_s"), "steady-req/s")
	b.ReportMetric(value(b, r, "client_cpu_cores"), "cpu-cores")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkServingAccuracy: 512 concurrent streams, a true 10 ms gap between content events; the
// client's ITL p99 and TTFT p50 next to the server's own emit record for the same requests. The
// workers start spread over a second and 4,096 warm-up requests go first, so that what is compared
// is the steady state, not the start-up burst (docs/performance.md, "Serving").
//
// The server runs in its own process, as servers under test do: this test binary started again
// (accuracyServerEnv). INFERBENCH_BAR_INPROCESS=1 runs it in this process instead, where it also
// shares the Go scheduler with the client; INFERBENCH_BAR_SERVER=URL measures a server already
// running, started with
//
//	inferbench mockserver --addr 127.0.0.1:8000 --ttft-ms 'uniform(10,30)' --itl-ms 10 \
//	    --output-tokens 32 --record 30000
func BenchmarkServingAccuracy(b *testing.B) {
	const n, warm = 20000, 4096
	w := warm
	lc := load.Config{Mode: load.ModeConcurrency, Concurrency: 512, RampUp: time.Second, WarmupIterations: &w}
	var r result.Scenario
	var emitted []mockserver.Emission
	if os.Getenv("INFERBENCH_BAR_INPROCESS") != "" {
		ms := mockserver.New(accuracyServer(n + 2*warm))
		r = scenario(b, ms, lc, n, "")
		emitted = ms.Emissions()
	} else {
		url := os.Getenv("INFERBENCH_BAR_SERVER")
		if url == "" {
			url = startAccuracyServer(b, n+2*warm)
		}
		r = scenarioAt(b, url, lc, n)
		resp, err := http.Get(strings.TrimSuffix(url, "/v1") + "/debug/emits")
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&emitted); err != nil {
			b.Fatal(err)
		}
	}
	// The measured requests are those the server received once measurement began.
	win := r.Extra.SteadyWindow
	if win == nil {
		b.Fatal("no steady_window in the result")
	}
	began := win.Start
	// The server's gaps per event, as it sent them: events written together (one flush, one
	// stamp) have a gap of zero, as itl_ms gives events the client read together.
	var raw, ttfts []float64
	for _, e := range emitted {
		if e.Received.Before(began) {
			continue
		}
		ttfts = append(ttfts, ms2(e.FirstToken.Sub(e.Received)))
		for k := 1; k < len(e.Events); k++ {
			raw = append(raw, ms2(e.Events[k].Sub(e.Events[k-1])))
		}
	}
	if len(ttfts) < n {
		b.Fatalf("the server recorded %d measured requests, want %d", len(ttfts), n)
	}
	itl, ttft := r.Metrics["itl_ms"].Summary, r.Metrics["ttft_ms"].Summary
	b.ReportMetric(itl.P99, "client-itl-p99-ms")
	b.ReportMetric(pct(raw, 0.99), "server-gap-p99-ms")
	b.ReportMetric(ttft.Median, "client-ttft-p50-ms")
	b.ReportMetric(pct(ttfts, 0.5), "server-ttft-p50-ms")
	b.ReportMetric(value(b, r, "client_cpu_cores"), "cpu-cores")
	b.ReportMetric(100*value(b, r, "ttft_coalesced_rate"), "ttft-coalesced-%")
	b.ReportMetric(100*value(b, r, "itl_coalesced_rate"), "itl-coalesced-%")
	b.ReportMetric(value(b, r, "client_stall_p99_ms"), "client-stall-p99-ms")
	bound := 0.0
	if r.Extra.ClientBound {
		bound = 1
	}
	b.ReportMetric(bound, "client-bound")
	b.ReportMetric(0, "ns/op")
}

// accuracyServer is the server of BenchmarkServingAccuracy, recording record requests.
func accuracyServer(record int) mockserver.Config {
	return mockserver.Config{
		TTFT: workload.Dist{Kind: "uniform", Min: 10, Max: 30}, ITL: workload.Fixed(10),
		OutputTokens: workload.Fixed(32), Record: record,
	}
}

// accuracyServerEnv, set to a record count, makes this test binary the accuracy bar's server
// (TestMain): it prints its URL and serves until its standard input closes.
const accuracyServerEnv = "INFERBENCH_BAR_CHILD_SERVER"

// startAccuracyServer runs the accuracy server in a child process and returns its URL; the child
// ends with the benchmark.
func startAccuracyServer(b *testing.B, record int) string {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run", "^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", accuracyServerEnv, record))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait() //nolint:errcheck // the child exits when its stdin closes
	})
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("accuracy server: %v", err)
	}
	return strings.TrimSpace(url)
}

// serveAccuracy is the child's side of startAccuracyServer.
func serveAccuracy(record string) int {
	n, err := strconv.Atoi(record)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s=%q: %v\n", accuracyServerEnv, record, err)
		return 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, err := mockserver.New(accuracyServer(n)).Start(ctx, "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(url)
	io.Copy(io.Discard, os.Stdin) //nolint:errcheck // any end of stdin ends the server
	return 0
}

func TestMain(m *testing.M) {
	if record := os.Getenv(accuracyServerEnv); record != "" {
		os.Exit(serveAccuracy(record))
	}
	os.Exit(m.Run())
}

// BenchmarkServingOpenLoop: poisson arrivals at 2,000 requests/s for 30 s; each response comes
// 10 ms after the request, 16 tokens in one write (the bar is the client's schedule).
func BenchmarkServingOpenLoop(b *testing.B) {
	ms := mockserver.New(mockserver.Config{TTFT: workload.Fixed(10), OutputTokens: workload.Fixed(16)})
	const rate, secs = 2000, 30
	r := scenario(b, ms, load.Config{Mode: load.ModeRate, Rate: rate, Seed: 1, Duration: secs * time.Second}, 1, "")
	lag := r.Metrics["schedule_lag_ms"].Summary
	sent := float64(r.Iterations.Measured)
	b.ReportMetric(sent/secs, "sent/s")
	b.ReportMetric(value(b, r, "requests_per_s"), "completed/s")
	b.ReportMetric(lag.Median, "lag-p50-ms")
	b.ReportMetric(lag.P99, "lag-p99-ms")
	b.ReportMetric(value(b, r, "client_cpu_cores"), "cpu-cores")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkServingMemory: a closed-loop scenario of 1,000,000 streamed requests (concurrency 64,
// 32 events each); the process's RSS growth from before the scenario to its peak.
// INFERBENCH_BAR_MAX_SAMPLES sets the raw samples held per metric (engine.WithMaxSamples).
func BenchmarkServingMemory(b *testing.B) {
	if testing.Short() {
		b.Skip("a million requests")
	}
	n := 1_000_000
	if s := os.Getenv("INFERBENCH_BAR_REQUESTS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	ms := mockserver.New(mockserver.Config{OutputTokens: workload.Fixed(32)})
	runtime.GC()
	before := rssMB(b)
	done, peaked := make(chan struct{}), make(chan float64)
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		peak := before
		for {
			select {
			case <-done:
				peaked <- max(peak, rssMB(b))
				return
			case <-t.C:
				peak = max(peak, rssMB(b))
			}
		}
	}()
	r := scenario(b, ms, load.Config{Mode: load.ModeConcurrency, Concurrency: 64}, n, "")
	close(done)
	peak := <-peaked
	b.ReportMetric(float64(r.Iterations.Measured), "requests")
	b.ReportMetric(before, "rss-before-MB")
	b.ReportMetric(peak-before, "rss-growth-MB")
	b.ReportMetric(value(b, r, "requests_per_s"), "req/s")
	b.ReportMetric(0, "ns/op")
}

func ms2(d time.Duration) float64 { return float64(d) / 1e6 }

func pct(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

// rssMB reads the process's resident set size from /proc.
func rssMB(b *testing.B) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
