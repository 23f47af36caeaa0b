package openai

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/workload"
)

// TestHistoryInBody: a request of a multi-turn session sends its history as earlier messages
// (chat) or at the start of the prompt (completions), and the subject offers its trace's times.
func TestHistoryInBody(t *testing.T) {
	dir := t.TempDir()
	trace := `{"timestamp": 0, "input_tokens": 3, "output_tokens": 2, "session_id": 7}` + "\n" +
		`{"timestamp": 0.5, "input_tokens": 4, "output_tokens": 2, "session_id": 7}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "t.jsonl"), []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	wl := workload.Config{File: "t.jsonl", Format: workload.FormatTrace}
	src, err := workload.Open(wl, dir)
	if err != nil {
		t.Fatal(err)
	}
	p := src.Prompt(1)
	for _, endpoint := range []string{"chat", "completions"} {
		f := newFake(t, 200, content(" a")+done)
		s, err := Open(context.Background(), Config{URL: f.URL + "/v1", Model: "m", Endpoint: endpoint, Workload: wl}, nil, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if diff := cmp.Diff([]time.Duration{0, 500 * time.Millisecond}, s.Arrivals()); diff != "" {
			t.Errorf("arrivals (-want +got):\n%s", diff)
		}
		if _, err := s.Do(context.Background(), subject.Request{Index: 1}); err != nil {
			t.Fatal(err)
		}
		got := f.req(0)
		if endpoint == "chat" {
			want := []any{
				map[string]any{"role": "user", "content": p.History[0].Text},
				map[string]any{"role": "assistant", "content": p.History[1].Text},
				map[string]any{"role": "user", "content": p.Text},
			}
			if diff := cmp.Diff(want, got["messages"]); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		} else if want := p.History[0].Text + "\n\n" + p.History[1].Text + "\n\n" + p.Text; got["prompt"] != want {
			t.Errorf("prompt %q, want %q", got["prompt"], want)
		}
	}
}
