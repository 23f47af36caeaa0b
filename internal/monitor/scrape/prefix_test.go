package scrape

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/monitor"
)

// TestPrefixCacheHitFromCounters: vLLM's prefix-cache counters hold every earlier run's lookups;
// the hit rate is this scenario's, from the first scrape on: 20 of 200 tokens since (10%), not the
// 920 of 1,200 since the server started; before it, 900 of 1,000.
func TestPrefixCacheHitFromCounters(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		q, h := 1000, 900
		if n.Add(1) > 1 {
			q, h = 1200, 920
		}
		fmt.Fprintf(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\"} 1\n"+
			"# TYPE vllm:prefix_cache_queries counter\nvllm:prefix_cache_queries_total{engine=\"0\"} %d\n"+
			"# TYPE vllm:prefix_cache_hits counter\nvllm:prefix_cache_hits_total{engine=\"0\"} %d\n", q, h)
	}))
	defer srv.Close()
	s := New(srv.URL, time.Millisecond)
	t0 := time.Now()
	first, err := s.Sample(t0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hit, ok := find(first, PrefixCacheHit); ok {
		t.Errorf("first scrape: hit rate %v, want none yet (no lookups since)", hit)
	}
	second, err := s.Sample(t0.Add(time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	if hit, ok := find(second, PrefixCacheHit); !ok || hit != 10 {
		t.Errorf("second scrape: hit rate %v (%v), want 10%%", hit, ok)
	}
	// Before the scenario: 900 of 1,000 prompt tokens found, in every scrape.
	for i, vals := range [][]monitor.Value{first, second} {
		prior, ok1 := find(vals, PrefixCachePrior)
		before, ok2 := find(vals, PromptTokensBefore)
		if !ok1 || !ok2 || prior != 90 || before != 1000 {
			t.Errorf("scrape %d: prior hit rate %v (%v), tokens before %v (%v); want 90%% of 1000", i+1, prior, ok1, before, ok2)
		}
	}
}

// TestPrefixCacheHitGauge: SGLang reports its hit rate as a ratio.
func TestPrefixCacheHitGauge(t *testing.T) {
	fams, err := Parse(strings.NewReader("# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs 2\n# TYPE sglang:cache_hit_rate gauge\nsglang:cache_hit_rate 0.25\n"))
	if err != nil {
		t.Fatal(err)
	}
	vals, _ := Gauges(fams)
	if hit, ok := find(vals, PrefixCacheHit); !ok || hit != 25 {
		t.Errorf("hit rate %v (%v), want 25%%", hit, ok)
	}
}

func find(vals []monitor.Value, name string) (float64, bool) {
	for _, v := range vals {
		if v.Name == name {
			return v.V, true
		}
	}
	return 0, false
}

// TestPrefixCacheHitLlamaCpp: llama-server counts the prompt tokens it processed and, apart, those
// it took from its cache; the hit rate is the cached over both, since the first scrape: 300
// cached of 400 prompt tokens (75%).
func TestPrefixCacheHitLlamaCpp(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		processed, cached := 500, 40
		if n.Add(1) > 1 {
			processed, cached = 600, 340
		}
		fmt.Fprintf(w, "# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 1\n"+
			"# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total %d\n"+
			"# TYPE llamacpp:prompt_tokens_cached_total counter\nllamacpp:prompt_tokens_cached_total %d\n", processed, cached)
	}))
	defer srv.Close()
	s := New(srv.URL, time.Millisecond)
	t0 := time.Now()
	if _, err := s.Sample(t0, nil); err != nil {
		t.Fatal(err)
	}
	second, err := s.Sample(t0.Add(time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	if hit, ok := find(second, PrefixCacheHit); !ok || hit != 75 {
		t.Errorf("second scrape: hit rate %v (%v), want 75%%", hit, ok)
	}
}
