package gofunc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/inferbench/inferbench/internal/explain"
	"github.com/inferbench/inferbench/subject"
)

var spinSink int

//go:noinline
func profileSpin(n int) {
	for i := range n {
		spinSink += i * i % 7
	}
}

// TestProfileChunks: the CPU profile is taken in ProfileChunks labelled chunks, each with its
// calls, which explain reads back as chunks whose costs it divides by the calls.
func TestProfileChunks(t *testing.T) {
	old := profileChunkTime
	profileChunkTime = 50 * time.Millisecond
	t.Cleanup(func() { profileChunkTime = old })
	name := fmt.Sprintf("gofunc-test/profile-%d", registered.Add(1))
	Register(name, func(context.Context) error { profileSpin(200_000); return nil })
	s, err := Open(context.Background(), subject.Spec{Config: &Config{Func: name}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := t.TempDir()
	files, err := s.(*Subject).Profile(context.Background(), dir, 16)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || filepath.Base(files[0]) != "cpu.pprof" {
		t.Fatalf("files %v: want cpu.pprof and heap.pprof", files)
	}
	p, err := explain.Load(dir, []string{"cpu.pprof"})
	if err != nil {
		t.Fatal(err)
	}
	// Sampled ProfileHz times a second, not the runtime's default 100.
	fh, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	pp, err := profile.Parse(fh)
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(1e9 / ProfileHz); pp.Period != want {
		t.Errorf("sampling period %d ns, want %d", pp.Period, want)
	}
	// A chunk with no sample is not in the profile; most have some.
	if len(p.Chunks) < ProfileChunks/2 || len(p.Chunks) > ProfileChunks {
		t.Fatalf("%d chunks, want up to %d", len(p.Chunks), ProfileChunks)
	}
	for _, c := range p.Chunks {
		if c.Calls < 2 { // n/ProfileChunks at least
			t.Errorf("chunk of %v calls, want at least 2", c.Calls)
		}
	}
	spin := "github.com/inferbench/inferbench/internal/kind/gofunc.profileSpin"
	var self float64
	for _, c := range p.Chunks {
		self += c.Self[spin]
	}
	if self == 0 && !raceEnabled {
		t.Errorf("no sample of %s: chunks %+v", spin, p.Chunks)
	}
}

func TestChunkCalls(t *testing.T) {
	for _, tc := range []struct {
		n    int
		took time.Duration
		want int64
	}{
		{20, time.Second, 3},            // slow calls: n/chunks, rounded up
		{20, time.Millisecond, 250},     // fast calls: as many as last the chunk time
		{0, 0, int64(profileChunkTime)}, // a call the clock cannot see: 1 ns
		{1, 10 * time.Second, 1},        // never none
	} {
		if got := chunkCalls(tc.n, tc.took); got != tc.want {
			t.Errorf("chunkCalls(%d, %v) = %d, want %d", tc.n, tc.took, got, tc.want)
		}
	}
}

// A chunk holds profileChunkTime of CPU time, the profiler's clock, not of wall time: a call
// that waits 2 ms for 0.2 ms of work gets about 100 calls a chunk of 20 ms, not 10, so that its
// work has samples however long it waits (or waits for a core on a busy machine).
func TestProfileChunksByCPU(t *testing.T) {
	if _, ok := threadCPU(); !ok {
		t.Skip("no thread CPU clock on this platform: chunks are sized by wall time")
	}
	old := profileChunkTime
	profileChunkTime = 20 * time.Millisecond
	t.Cleanup(func() { profileChunkTime = old })
	name := fmt.Sprintf("gofunc-test/profile-cpu-%d", registered.Add(1))
	Register(name, func(context.Context) error {
		time.Sleep(2 * time.Millisecond)
		deadline := time.Now().Add(200 * time.Microsecond)
		for time.Now().Before(deadline) {
		}
		return nil
	})
	s, err := Open(context.Background(), subject.Spec{Config: &Config{Func: name}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := t.TempDir()
	if _, err := s.(*Subject).Profile(context.Background(), dir, 8); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "cpu.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	pp, err := profile.ParseData(b)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]bool{}
	for _, smp := range pp.Sample {
		for _, v := range smp.Label["inferbench_calls"] {
			calls[v] = true
		}
	}
	if len(calls) == 0 {
		t.Fatal("no sample of the chunks' calls")
	}
	for c := range calls {
		// Sized by wall time a chunk would have ceil(20 / 2.2) = 10 calls.
		if n, _ := strconv.Atoi(c); n < 40 {
			t.Errorf("chunks of %d calls, want about 100 (20 ms of CPU time at 0.2 ms a call)", n)
		}
	}
}
