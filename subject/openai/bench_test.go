package openai

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferbench/inferbench/mockserver"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/workload"
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
	var next atomic.Int64
	var failed atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				o, err := s.Do(ctx, subject.Request{Index: int(i)})
				if err != nil || len(o.Tokens) != 32 {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d requests failed", f, b.N)
	}
}
