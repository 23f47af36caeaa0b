package result

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/inferbench/inferbench/stats"
)

// benchRun is a shard's run: n scenarios, each with a latency distribution of 100 samples and
// two single values (as merge's benchmarks make).
func benchRun(b *testing.B, n int) *Run {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 1))
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	r := &Run{Schema: Schema, ID: "run-0", StartedAt: t0, FinishedAt: t0.Add(time.Hour), Environment: map[string]any{"hostname": "node-0"}}
	for i := range n {
		xs := make([]float64, 100)
		for j := range xs {
			xs[j] = 5 + rng.ExpFloat64()
		}
		s, _ := stats.Summarize(xs)
		lat := NewMetric("latency_ms")
		lat.Summary, lat.Samples = &s, xs
		tp, mem := 1000/s.Median, 2048.0
		r.Scenarios = append(r.Scenarios, Scenario{Benchmark: fmt.Sprint("model-", i/64), Scenario: fmt.Sprintf("batch_size=%d,dtype=fp16", i%64), Subject: "worker", Status: StatusOK,
			StartedAt: t0, DurationS: 3, Iterations: Iterations{Warmup: 10, Measured: 100},
			Metrics: map[string]Metric{"latency_ms": lat, "throughput_ips": {Unit: "items/s", Better: "higher", Value: &tp}, "memory_mb": {Unit: "MB", Better: "lower", Value: &mem}}})
	}
	r.Tally()
	return r
}

// BenchmarkDecode loads one shard's run.json of 1,000 scenarios.
func BenchmarkDecode(b *testing.B) {
	var doc bytes.Buffer
	if err := WriteJSON(&doc, benchRun(b, 1000)); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(doc.Len()))
	for b.Loop() {
		if _, err := Decode(doc.Bytes(), "run.json"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteJSON encodes a merged run of 64,000 scenarios; Whole is encoding/json at once,
// Chunked what WriteJSON does.
func BenchmarkWriteJSON(b *testing.B) {
	r := benchRun(b, 64000)
	for _, c := range []struct {
		name  string
		write func(io.Writer, *Run) error
	}{{"Whole", writeJSONWhole}, {"Chunked", WriteJSON}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if err := c.write(io.Discard, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
