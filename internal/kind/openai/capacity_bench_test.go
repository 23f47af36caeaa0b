//go:build unix

package openai

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/workload"
)

// BenchmarkCapacityStream is one streamed request's round trip as a live capacity search makes
// it: the openai subject over loopback HTTP to a mockserver under the capacity model of
// capacity-coverage's slots8-p90 configuration at its live scale (8 slots, 32 tokens, an
// iteration of about 0.5 ms), 8 requests in flight. Each op is one request; "cpu-us/op" is the
// CPU this process (client and server together) spent on it, the figure docs/serving.md gives
// for a live search. ns/op is the model's pace, not the CPU's; allocs/op and B/op do not depend
// on the machine's load, cpu-us/op does somewhat (record the load beside it).
func BenchmarkCapacityStream(b *testing.B) {
	const tokens, inFlight = 32, 8
	ms := mockserver.New(mockserver.Config{OutputTokens: workload.Fixed(tokens),
		Capacity: mockserver.Capacity{Slots: 8, PrefillMs: 4, TokenMs: 1, BatchSlowdown: 0.05, Scale: 0.45}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, err := ms.Start(ctx, "")
	if err != nil {
		b.Fatal(err)
	}
	s, err := Open(ctx, Config{URL: base, Model: "mock", MetricsURL: "none",
		Workload: workload.Config{InputTokens: workload.Fixed(8), OutputTokens: workload.Fixed(tokens)}}, nil, "")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	drive(b, ctx, s, inFlight, tokens)
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
}

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
