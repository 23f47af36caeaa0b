package mockserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPrefixCache: a prompt sent twice is found in the cache the second time, block by block from
// its start; one sharing only its first block finds that block; /metrics counts the prompt words
// looked up and found under vLLM's names; without PrefixCache there is no /metrics.
func TestPrefixCache(t *testing.T) {
	srv := httptest.NewServer(New(Config{PrefixCache: true}).Handler())
	defer srv.Close()
	words := func(n int, w string) string { return strings.TrimSpace(strings.Repeat(w+" ", n)) }
	prompt := words(16, "a") + " " + words(16, "b") + " " + words(8, "c") // 40 words, 2 whole blocks
	other := words(16, "a") + " " + words(16, "z")                        // its first block is prompt's
	for _, p := range []string{prompt, prompt, other} {
		body, _ := json.Marshal(map[string]any{"model": "m", "prompt": p, "max_tokens": 2})
		resp := post(t, srv.URL+"/v1/completions", string(body))
		io.Copy(io.Discard, resp.Body)
	}
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	// Looked up: 40 + 40 + 32 words; found: 32 (the second time) + 16 (the shared first block).
	for _, want := range []string{"vllm:prefix_cache_queries_total 112", "vllm:prefix_cache_hits_total 48"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, page)
		}
	}
	plain := httptest.NewServer(New(Config{}).Handler())
	defer plain.Close()
	if resp, err := http.Get(plain.URL + "/metrics"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("without a prefix cache: /metrics %v, %v; want 404", resp.Status, err)
	}
}

// TestUsageOffset: usage reports the completion tokens streamed plus the offset.
func TestUsageOffset(t *testing.T) {
	srv := httptest.NewServer(New(Config{UsageOffset: -2}).Handler())
	defer srv.Close()
	resp := post(t, srv.URL+"/v1/completions", `{"model":"m","prompt":"hi","max_tokens":8}`)
	var out struct {
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Usage.CompletionTokens != 6 {
		t.Errorf("completion_tokens %d, want 8 - 2", out.Usage.CompletionTokens)
	}
}
