package scrape

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/internal/monitor"
	"github.com/inferbench/inferbench/internal/testkit/llamatest"
)

func TestGaugesVLLM(t *testing.T) {
	b, err := os.ReadFile("testdata/vllm_metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	fams, err := Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	vals, server := Gauges(fams)
	// two engines: requests summed, the KV cache averaged and in percent
	want := []monitor.Value{{Name: "server_running_requests", V: 21}, {Name: "server_waiting_requests", V: 3}, {Name: "server_kv_cache_pct", V: 37.5}}
	if diff := cmp.Diff(want, vals); diff != "" || server != "vllm" {
		t.Errorf("server %q, gauges (-want +got):\n%s", server, diff)
	}
}

func TestGaugesOtherServers(t *testing.T) {
	cases := []struct {
		name, text, server string
		want               []monitor.Value
	}{
		// SGLang's names, token_usage a ratio
		{"sglang", "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{model_name=\"m\"} 4\n# TYPE sglang:num_queue_reqs gauge\nsglang:num_queue_reqs{model_name=\"m\"} 2\n# TYPE sglang:token_usage gauge\nsglang:token_usage{model_name=\"m\"} 0.1\n",
			"sglang", []monitor.Value{{Name: "server_running_requests", V: 4}, {Name: "server_waiting_requests", V: 2}, {Name: "server_kv_cache_pct", V: 10}}},
		// TGI: the batch is the running requests
		{"tgi", "# TYPE tgi_batch_current_size gauge\ntgi_batch_current_size 8\n# TYPE tgi_queue_size gauge\ntgi_queue_size 1\n",
			"tgi", []monitor.Value{{Name: "server_running_requests", V: 8}, {Name: "server_waiting_requests", V: 1}, {Name: "server_batch_size", V: 8}}},
		// an endpoint of something else
		{"other", "# TYPE go_goroutines gauge\ngo_goroutines 12\n", "", nil},
	}
	for _, c := range cases {
		fams, err := Parse(strings.NewReader(c.text))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		vals, server := Gauges(fams)
		if diff := cmp.Diff(c.want, vals); diff != "" || server != c.server {
			t.Errorf("%s: server %q, gauges (-want +got):\n%s", c.name, server, diff)
		}
	}
}

func TestSamplerEvery(t *testing.T) {
	var mu sync.Mutex
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		http.ServeFile(w, r, "testdata/vllm_metrics.txt")
	}))
	defer srv.Close()
	s := New(srv.URL, time.Second)
	t0 := time.Now()
	got, err := s.Sample(t0, nil)
	if err != nil || len(got) != 3 {
		t.Fatalf("first sample: %v, %v", got, err)
	}
	if got, _ := s.Sample(t0.Add(500*time.Millisecond), nil); len(got) != 0 {
		t.Errorf("a sample before the next scrape is due: %v", got)
	}
	if got, _ := s.Sample(t0.Add(time.Second), nil); len(got) != 3 {
		t.Errorf("a due scrape: %v", got)
	}
	mu.Lock()
	n := hits
	mu.Unlock()
	if n != 2 || s.Server() != "vllm" {
		t.Errorf("%d scrapes, server %q; want 2, vllm", n, s.Server())
	}
	if _, err := Probe(context.Background(), srv.URL); err != nil {
		t.Errorf("probe: %v", err)
	}
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("go_goroutines 3\n")) }))
	defer bad.Close()
	if _, err := Probe(context.Background(), bad.URL); !errors.Is(err, ErrNoServerMetrics) {
		t.Errorf("probe of a non-server: %v, want ErrNoServerMetrics", err)
	}
}

// TestLlamaCppMetrics scrapes a real llama-server (--metrics) while it serves requests: it is
// recognised, and its busy slots show in server_running_requests while requests run.
func TestLlamaCppMetrics(t *testing.T) {
	srv := llamatest.Start(t, 2)
	if name, err := Probe(context.Background(), srv.Base+"/metrics"); err != nil || name != "llamacpp" {
		t.Fatalf("probe: %q, %v", name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				body := `{"model":"tiny","prompt":"the sky is","max_tokens":200,"ignore_eos":true}`
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/completions", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}
		}()
	}
	s := New(srv.Base+"/metrics", time.Millisecond)
	busy := 0.0
	deadline := time.Now().Add(20 * time.Second)
	for busy == 0 && time.Now().Before(deadline) {
		vals, err := s.Sample(time.Now(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			if v.Name == "server_running_requests" {
				busy = max(busy, v.V)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if busy < 1 {
		t.Errorf("server_running_requests stayed 0 while two clients kept the server busy")
	}
}

// TestLlamaCppPrefixCacheHit: a real llama-server asked the same prompt twice finds all but its
// last token in its cache the second time: about half of the two requests' prompt tokens.
func TestLlamaCppPrefixCacheHit(t *testing.T) {
	srv := llamatest.Start(t, 1)
	s := New(srv.Base+"/metrics", time.Millisecond)
	if _, err := s.Sample(time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	body := `{"model":"` + srv.Model + `","prompt":"write a long story about the sea and the ship and the sailors who sailed it","max_tokens":4}`
	for range 2 {
		resp, err := http.Post(srv.URL+"/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	vals, err := s.Sample(time.Now().Add(time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	if hit, ok := find(vals, PrefixCacheHit); !ok || hit < 40 || hit >= 50 {
		t.Errorf("hit rate %v (%v), want 40-50%% (all but one token of the second prompt)", hit, ok)
	}
}
