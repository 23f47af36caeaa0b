package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/subject"
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
	wl := workload.Config{File: "t.jsonl", Format: workload.FormatTrace, CacheKey: "k"} // one key: the test's Open and the subject's draw the same text
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

// TestImagesInBody: with workload.images, the user message's content is a text part and one
// image_url part per image, each a data URL of the size asked.
func TestImagesInBody(t *testing.T) {
	f := newFake(t, 200, content(" a")+done)
	wl := workload.Config{InputTokens: workload.Fixed(4), Images: workload.ImageConfig{Count: 2, Width: 32, Height: 16, Format: "png"}}
	s := open(t, Config{URL: f.URL + "/v1", Workload: wl})
	if _, err := s.Do(context.Background(), subject.Request{Index: 3}); err != nil {
		t.Fatal(err)
	}
	msgs := f.req(0)["messages"].([]any)
	parts, ok := msgs[0].(map[string]any)["content"].([]any)
	if !ok || len(parts) != 3 {
		t.Fatalf("content %v: want a text and two image parts", msgs[0])
	}
	if p := parts[0].(map[string]any); p["type"] != "text" || p["text"] == "" {
		t.Errorf("first part %v", p)
	}
	for _, part := range parts[1:] {
		p := part.(map[string]any)
		url, _ := p["image_url"].(map[string]any)["url"].(string)
		if p["type"] != "image_url" || !strings.HasPrefix(url, "data:image/png;base64,") {
			t.Fatalf("image part %v", p)
		}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(url, "data:image/png;base64,"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil || img.Bounds().Dx() != 32 || img.Bounds().Dy() != 16 {
			t.Errorf("image %v, %v: want 32 × 16", img.Bounds(), err)
		}
	}
	if _, err := Open(context.Background(), Config{URL: f.URL + "/v1", Model: "m", Endpoint: "completions", Workload: wl}, nil, ""); err == nil || !strings.Contains(err.Error(), "endpoint chat") {
		t.Errorf("images on completions: %v", err)
	}
}
