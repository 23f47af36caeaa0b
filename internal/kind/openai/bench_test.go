package openai

import (
	"context"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/base/unit"
	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/subject"
)

// BenchmarkThroughput drives the mockserver over loopback HTTP with 64 concurrent streams of 32
// one-token content events each, client and server in one process, and reports completed
// requests per second.
func BenchmarkThroughput(b *testing.B) {
	ms := mockserver.New(mockserver.Config{OutputTokens: workload.Fixed(32)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, err := ms.Start(ctx, "")
	if err != nil {
		b.Fatal(err)
	}
	const conc = 64
	s, err := Open(ctx, Config{URL: base, Model: "mock"}, subject.Params{"concurrency": conc}, "")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	drive(b, ctx, s, conc, 32)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// drive sends b.N streamed requests through s, inFlight at a time, and fails the benchmark when
// any fails or streams other than tokens tokens.
func drive(b *testing.B, ctx context.Context, s *Subject, inFlight, tokens int) {
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for range inFlight {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				o, err := s.Do(ctx, subject.Request{Index: int(i)})
				if err != nil || len(o.Tokens) != tokens {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d requests failed", f, b.N)
	}
}

// BenchmarkAccuracy runs b.N streamed requests at 512 concurrent streams (INFERBENCH_STREAMS
// overrides) against a mockserver whose inter-token gap is exactly 10 ms, and reports the client's
// ITL and TTFT percentiles next to the server's own record of when it emitted each event.
func BenchmarkAccuracy(b *testing.B) {
	conc := 512
	if s := os.Getenv("INFERBENCH_STREAMS"); s != "" {
		conc, _ = strconv.Atoi(s)
	}
	ms := mockserver.New(mockserver.Config{
		TTFT: workload.Dist{Kind: "uniform", Min: 10, Max: 30}, ITL: workload.Fixed(10), OutputTokens: workload.Fixed(64), Record: 1 << 20,
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, err := ms.Start(ctx, "")
	if err != nil {
		b.Fatal(err)
	}
	s, err := Open(ctx, Config{URL: base, Model: "mock"}, subject.Params{"concurrency": conc}, "")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var (
		next      atomic.Int64
		mu        sync.Mutex
		itl, ttft []float64
		failed    int
	)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			var gaps, firsts []float64
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					break
				}
				o, err := s.Do(ctx, subject.Request{Index: int(i)})
				if err != nil {
					mu.Lock()
					failed++
					mu.Unlock()
					continue
				}
				firsts = append(firsts, unit.MS(o.FirstToken.Sub(o.Start)))
				for k := 1; k < len(o.Tokens); k++ {
					gaps = append(gaps, unit.MS(o.Tokens[k].At.Sub(o.Tokens[k-1].At)))
				}
			}
			mu.Lock()
			itl = append(itl, gaps...)
			ttft = append(ttft, firsts...)
			mu.Unlock()
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	if failed > 0 {
		b.Fatalf("%d requests failed", failed)
	}
	var sitl, sttft []float64
	for _, e := range ms.Emissions() {
		sttft = append(sttft, unit.MS(e.FirstToken.Sub(e.Received)))
		for k := 1; k < len(e.Events); k++ {
			sitl = append(sitl, unit.MS(e.Events[k].Sub(e.Events[k-1])))
		}
	}
	b.ReportMetric(pct(itl, 50), "client-itl-p50-ms")
	b.ReportMetric(pct(itl, 99), "client-itl-p99-ms")
	b.ReportMetric(pct(sitl, 50), "server-itl-p50-ms")
	b.ReportMetric(pct(sitl, 99), "server-itl-p99-ms")
	b.ReportMetric(pct(ttft, 50), "client-ttft-p50-ms")
	b.ReportMetric(pct(sttft, 50), "server-ttft-p50-ms")
	b.ReportMetric(0, "ns/op")
}

// pct returns the p-th percentile of xs (nearest rank); it sorts xs.
func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	i := int(math.Ceil(p/100*float64(len(xs)))) - 1
	return xs[max(i, 0)]
}
