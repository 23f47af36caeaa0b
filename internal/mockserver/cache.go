// This file holds the mockserver's prefix cache: a model of a server's automatic prefix caching
// that counts the prompt tokens it looked up and found, as vLLM's counters do, so that a client
// reading them sees what a warm cache looks like.

package mockserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"net/http"
	"sync"
)

// cacheBlock is the number of prompt words in one cached block: a prompt is found in the cache
// block by block from its start, as vLLM's blocks of 16 tokens are.
const cacheBlock = 16

// cacheLimit bounds the blocks held; the cache is emptied when it is full (an eviction of all).
const cacheLimit = 1 << 20

// prefixCache holds the blocks of every prompt the server has seen, keyed by the hash of the
// prompt up to and including the block, and counts the prompt tokens looked up and found. It
// outlives a client's run: a second run sending the same prompts finds them.
type prefixCache struct {
	seed maphash.Seed

	mu            sync.Mutex
	blocks        map[uint64]struct{}
	queries, hits int64
}

func newPrefixCache() *prefixCache {
	return &prefixCache{seed: maphash.MakeSeed(), blocks: map[uint64]struct{}{}}
}

// lookup counts one prompt's words as looked up, those of its leading blocks the cache held as
// found, and keeps its blocks.
func (c *prefixCache) lookup(words [][]byte) {
	var h maphash.Hash
	h.SetSeed(c.seed)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queries += int64(len(words))
	found := true
	for i := 0; i+cacheBlock <= len(words); i += cacheBlock {
		for _, w := range words[i : i+cacheBlock] {
			h.Write(w)
			h.WriteByte(' ')
		}
		key := h.Sum64()
		if _, ok := c.blocks[key]; ok && found {
			c.hits += cacheBlock
			continue
		}
		found = false
		if len(c.blocks) >= cacheLimit {
			clear(c.blocks)
		}
		c.blocks[key] = struct{}{}
	}
}

// counts returns the prompt tokens looked up and found.
func (c *prefixCache) counts() (queries, hits int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queries, c.hits
}

// promptWords returns the words of a request's prompt: its messages' contents in order, or its
// prompt, as written in the JSON.
func promptWords(chat bool, req request) [][]byte {
	if !chat {
		return bytes.Fields(req.Prompt)
	}
	var out [][]byte
	for _, m := range req.Messages {
		var msg struct {
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m, &msg) == nil {
			out = append(out, bytes.Fields(msg.Content)...)
		}
	}
	return out
}

// metrics answers GET /metrics in the Prometheus text format with vLLM's names: the requests
// running, and the prefix cache's counters of prompt tokens.
func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) {
	q, h := s.cache.counts()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running %d\n", s.active.Load())
	fmt.Fprintf(w, "# TYPE vllm:prefix_cache_queries counter\nvllm:prefix_cache_queries_total %d\n", q)
	fmt.Fprintf(w, "# TYPE vllm:prefix_cache_hits counter\nvllm:prefix_cache_hits_total %d\n", h)
}
