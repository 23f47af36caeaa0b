package mock

import (
	"context"
	"testing"

	"github.com/inferbench/inferbench/subject"
)

// TestGenerateFollowsVariantAndBatch: the README's llm-mock sets ttft_ms and itl_ms, and every
// variant × batch row showed the same figures because explicit values were used as they are.
// They are the eager batch-1 figures now, scaled like latency_ms; a batch step carries one token
// per sequence, and max_new_tokens (--num-tokens-to-generate) sets the tokens per sequence.
func TestGenerateFollowsVariantAndBatch(t *testing.T) {
	cfg := &Config{LatencyMS: 8, Jitter: 0.0001, Generate: &Generate{OutputTokens: 16, TTFTMS: 12, ITLMS: 1.5}}
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
	s, err := Open(context.Background(), subject.Spec{Benchmark: "m", Config: &Config{LatencyMS: 0.01}, Params: subject.Params{}})
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
