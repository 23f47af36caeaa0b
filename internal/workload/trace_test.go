package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestTraces reads each trace format as published: the times from the first request, the lengths,
// and prompts of the given lengths.
func TestTraces(t *testing.T) {
	for _, tt := range []struct {
		format, file string
		at           []time.Duration
		in, out      []int // of each request's own input, and its max_tokens
	}{
		{FormatMooncake, "mooncake.jsonl", []time.Duration{0, 250 * time.Millisecond, 1500 * time.Millisecond}, []int{600, 520, 100}, []int{20, 8, 4}},
		{FormatAzure, "azure.csv", []time.Duration{0, 4314579 * time.Microsecond, 4519410 * time.Microsecond}, []int{374, 396, 879}, []int{44, 109, 34}},
		{FormatTrace, "trace.jsonl", []time.Duration{0, 500 * time.Millisecond, 1750 * time.Millisecond}, []int{12, 7, 9}, []int{5, 3, 4}},
	} {
		t.Run(tt.format, func(t *testing.T) {
			s, err := Open(Config{File: tt.file, Format: tt.format, Seed: 1}, "testdata")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.at, s.Arrivals()); diff != "" {
				t.Errorf("arrivals (-want +got):\n%s", diff)
			}
			for i := range tt.in {
				p := s.Prompt(i)
				if got := CountWords(p.Text); got != tt.in[i] || p.OutputTokens != tt.out[i] {
					t.Errorf("request %d: %d words, max_tokens %d; want %d and %d", i, got, p.OutputTokens, tt.in[i], tt.out[i])
				}
			}
		})
	}
}

// TestMooncakeSharedBlocks: requests with the same leading hash ids share that prefix of text,
// and differ after it, so a server's prefix cache sees what it saw in the trace.
func TestMooncakeSharedBlocks(t *testing.T) {
	s, err := Open(Config{File: "mooncake.jsonl", Format: FormatMooncake}, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	a, b := strings.Fields(s.Prompt(0).Text), strings.Fields(s.Prompt(1).Text)
	if !cmp.Equal(a[:MooncakeBlock], b[:MooncakeBlock]) {
		t.Error("block 46 differs between the two requests that share it")
	}
	if cmp.Equal(a[MooncakeBlock:MooncakeBlock+8], b[MooncakeBlock:MooncakeBlock+8]) {
		t.Error("blocks 47 and 48 have the same text")
	}
}

// TestTraceSession: a request with a session id carries the session's earlier requests and
// replies as history, and counts them in its input.
func TestTraceSession(t *testing.T) {
	s, err := Open(Config{File: "trace.jsonl", Format: FormatTrace}, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	p := s.Prompt(2)
	if len(p.History) != 2 || p.History[0].Role != "user" || p.History[1].Role != "assistant" {
		t.Fatalf("history %+v, want the first turn of session a and its reply", p.History)
	}
	if p.History[0].Text != s.Prompt(0).Text || CountWords(p.History[1].Text) != 5 {
		t.Errorf("history %q", p.History)
	}
	if p.InputTokens != 12+5+9 {
		t.Errorf("input tokens %d, want 26 (history included)", p.InputTokens)
	}
	if len(s.Prompt(1).History) != 0 {
		t.Error("a request without a session has history")
	}
}

func TestTraceErrors(t *testing.T) {
	for _, tt := range []struct{ format, text, want string }{
		{FormatTrace, `{"input_tokens": 3, "output_tokens": 2}`, `:1: no "timestamp"`},
		{FormatTrace, `{"timestamp": 1, "input_tokens": 0, "output_tokens": 2}`, `:1: "input_tokens"`},
		{FormatMooncake, "{\"timestamp\": 1, \"input_length\": 3, \"output_length\": 1}\n{\"timestamp\": -1, \"input_length\": 3, \"output_length\": 1}", ":2: timestamp -1"},
		{FormatAzure, "TIMESTAMP,ContextTokens\n", "has the columns"},
		{FormatAzure, "TIMESTAMP,ContextTokens,GeneratedTokens\nyesterday,3,4\n", `:2: TIMESTAMP "yesterday"`},
	} {
		if _, err := readTrace("t", tt.format, strings.NewReader(tt.text), 0); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %q: %v, want %q", tt.format, tt.text, err, tt.want)
		}
	}
}

// TestTurns: in a session of 3 turns, turn k carries the k earlier turns (prompt and reply) as
// history, and its input counts them; the next session starts afresh.
func TestTurns(t *testing.T) {
	s, err := Open(Config{Seed: 2, Turns: 3, InputTokens: Fixed(10), OutputTokens: Fixed(4)}, "")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{0, 2, 4, 0, 2} {
		p := s.Prompt(i)
		if len(p.History) != want {
			t.Fatalf("request %d: %d history messages, want %d", i, len(p.History), want)
		}
		if p.InputTokens != 10+want/2*14 {
			t.Errorf("request %d: input %d tokens, want %d", i, p.InputTokens, 10+want/2*14)
		}
	}
	p := s.Prompt(5)
	if p.History[0].Text != s.Prompt(3).Text || p.History[2].Text != s.Prompt(4).Text || CountWords(p.History[3].Text) != 4 {
		t.Errorf("session 1's third turn: history %q", p.History)
	}
	if p.Text == s.Prompt(4).Text {
		t.Error("a turn repeats the previous prompt")
	}
}
