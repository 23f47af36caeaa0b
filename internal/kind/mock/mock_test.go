package mock

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/inferbench/inferbench/subject"
)

// TestGenerateFollowsVariantAndBatch: the README's llm-mock sets ttft_ms and itl_ms, and every
// variant × batch row showed the same figures because explicit values were used as they are.
// They are the eager batch-1 figures now, scaled like latency_ms; a batch step carries one token
// per sequence, and max_new_tokens (--num-tokens-to-generate) sets the tokens per sequence.
func TestGenerateFollowsVariantAndBatch(t *testing.T) {
	cfg := &Config{LatencyMS: ptr(8), Jitter: ptr(0.0001), Generate: &Generate{OutputTokens: 16, TTFTMS: ptr(12), ITLMS: ptr(1.5)}}
	open := func(p subject.Params) *Model {
		t.Helper()
		s, err := Open(context.Background(), subject.Spec{Benchmark: "llm-mock", Config: cfg, Params: p})
		if err != nil {
			t.Fatal(err)
		}
		return s.(*Model)
	}
	eager1 := open(subject.Params{"variant": "eager", "batch_size": 1})
	compiled1 := open(subject.Params{"variant": "compiled", "batch_size": 1})
	eager8 := open(subject.Params{"variant": "eager", "batch_size": 8})
	if eager1.gen.TTFTMS != 12 || eager1.gen.ITLMS != 1.5 {
		t.Errorf("eager batch 1: ttft %v itl %v, want the configured 12 and 1.5", eager1.gen.TTFTMS, eager1.gen.ITLMS)
	}
	if got, want := compiled1.gen.TTFTMS, 12*DefaultVariants["compiled"]; got != want {
		t.Errorf("compiled batch 1: ttft %v, want %v", got, want)
	}
	// batch 8 at per_item_ms = latency/10: (8 + 0.8*7)/8 = 1.7 times slower per step
	if got := eager8.gen.ITLMS; got < 1.5*1.69 || got > 1.5*1.71 {
		t.Errorf("eager batch 8: itl %v, want 1.7 × 1.5", got)
	}
	// tokens per second grows with the batch: 8 tokens per step
	o, err := eager8.Do(context.Background(), subject.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if o.OutputTokens != 16*8 || len(o.Tokens) != 16 || o.Tokens[0].Tokens != 8 || o.Items != 8 {
		t.Errorf("batch 8: output_tokens %d, %d events of %d tokens, items %d; want 128, 16 of 8, 8", o.OutputTokens, len(o.Tokens), o.Tokens[0].Tokens, o.Items)
	}
	if got := open(subject.Params{"max_new_tokens": 4}).gen.OutputTokens; got != 4 {
		t.Errorf("max_new_tokens 4: %d tokens per sequence", got)
	}
}

// TestConcurrentCalls: a concurrency load calls Do from several goroutines; the mock's random
// source and call count are shared state (a data race under -race before the lock).
func TestConcurrentCalls(t *testing.T) {
	s, err := Open(context.Background(), subject.Spec{Benchmark: "m", Config: &Config{LatencyMS: ptr(0.01)}, Params: subject.Params{}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	for range 4 {
		go func() {
			var err error
			for range 20 {
				if _, e := s.Do(context.Background(), subject.Request{}); e != nil {
					err = e
				}
			}
			done <- err
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	if got := s.(*Model).calls; got != 80 {
		t.Errorf("calls = %d, want 80", got)
	}
}

func ptr(v float64) *float64 { return &v }

// TestExplicitZero: a definition's explicit 0 is kept, not taken for "not given": latency_ms: 0
// ran every call at the 10 ms default, jitter: 0 at 0.05, compile_ms: 0 at 20 × the latency, and
// ttft_ms/itl_ms: 0 at their defaults. Absent fields keep their defaults.
func TestExplicitZero(t *testing.T) {
	open := func(c *Config, p subject.Params) *Model {
		t.Helper()
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		s, err := Open(context.Background(), subject.Spec{Benchmark: "m", Config: c, Params: p})
		if err != nil {
			t.Fatal(err)
		}
		return s.(*Model)
	}
	zero := &Config{LatencyMS: ptr(0), Jitter: ptr(0), CompileMS: ptr(0), Generate: &Generate{TTFTMS: ptr(0), ITLMS: ptr(0)}}
	m := open(zero, subject.Params{"variant": "compiled", "batch_size": 4})
	if m.latency != 0 || m.jitter != 0 || m.compile != 0 || m.gen.TTFTMS != 0 || m.gen.ITLMS != 0 {
		t.Errorf("explicit zeros: latency %v jitter %v compile %v ttft %v itl %v, want all 0",
			m.latency, m.jitter, m.compile, m.gen.TTFTMS, m.gen.ITLMS)
	}
	start := time.Now()
	for range 1000 {
		if _, err := m.Do(context.Background(), subject.Request{}); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("1,000 calls of a zero-latency mock took %v", d)
	}
	// A parameter of 0 overrides the definition's value as well.
	if m := open(&Config{LatencyMS: ptr(5)}, subject.Params{"latency_ms": 0}); m.latency != 0 {
		t.Errorf("parameter latency_ms 0: latency %v", m.latency)
	}
	d := open(&Config{Generate: &Generate{}}, subject.Params{"variant": "compiled"})
	if d.latency != 10*DefaultVariants["compiled"] || d.jitter != 0.05 || d.compile != 200 || d.gen.TTFTMS != 10*DefaultVariants["compiled"] || d.gen.OutputTokens != 16 {
		t.Errorf("defaults: latency %v jitter %v compile %v ttft %v tokens %d", d.latency, d.jitter, d.compile, d.gen.TTFTMS, d.gen.OutputTokens)
	}
	for _, bad := range []*Config{{LatencyMS: ptr(-1)}, {PerItemMS: ptr(-1)}, {Jitter: ptr(math.NaN())}, {MemoryMB: -1}, {Generate: &Generate{ITLMS: ptr(-2)}}} {
		if bad.Validate() == nil {
			t.Errorf("%+v: accepted", bad)
		}
	}
}
