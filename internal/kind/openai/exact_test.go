package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/subject"
)

var yes, no = true, false

// TestExactLengthsByServer: requests ask for exactly their output length where the server takes
// it, by default: the fields a known server (its /v1/models owned_by) takes; an unknown server's
// answer to one request with them; none where the server refuses them (sent again without, and
// noted) or lists no models; and what ignore_eos says when set.
func TestExactLengthsByServer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		models    string // GET /v1/models answer; "" for 404
		refuse    bool   // 400 to a request with ignore_eos or min_tokens
		ignoreEOS *bool
		want      []string // the fields every request of the run has, of ignore_eos and min_tokens
		probes    int      // one-token requests before the run's
		note      string   // in exact_output
	}{
		// vLLM takes both
		{name: "vllm", models: `{"data":[{"id":"m","owned_by":"vllm"}]}`, want: []string{"ignore_eos", "min_tokens"}, note: `owned_by "vllm"`},
		// llama-server takes ignore_eos; the model is found by name among several
		{name: "llama.cpp", models: `{"data":[{"id":"x","owned_by":"someone"},{"id":"m","owned_by":"llamacpp"}]}`, want: []string{"ignore_eos"}, note: `owned_by "llamacpp"`},
		// an unknown server that answers a request with both fields gets them
		{name: "unknown, takes them", models: `{"data":[{"id":"m","owned_by":"acme"}]}`, want: []string{"ignore_eos", "min_tokens"}, probes: 1, note: "was answered"},
		// an unknown server that refuses them: the request again without, and a note
		{name: "unknown, refuses them", models: `{"data":[{"id":"m","owned_by":"openai"}]}`, refuse: true, probes: 2, note: "refused ignore_eos and min_tokens (HTTP 400: unrecognized request argument"},
		// no model list: neither
		{name: "no model list", note: "max_tokens only"},
		// ignore_eos: false on a vLLM server: neither
		{name: "turned off", models: `{"data":[{"id":"m","owned_by":"vllm"}]}`, ignoreEOS: &no, note: "ignore_eos: false"},
		// ignore_eos: true on an unknown server: both, without asking
		{name: "turned on", ignoreEOS: &yes, want: []string{"ignore_eos", "min_tokens"}, note: "ignore_eos: true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var bodies []map[string]any
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					if tc.models == "" {
						http.NotFound(w, r)
						return
					}
					io.WriteString(w, tc.models)
					return
				}
				var m map[string]any
				b, _ := io.ReadAll(r.Body)
				if err := json.Unmarshal(b, &m); err != nil {
					t.Errorf("request body: %v", err)
				}
				mu.Lock()
				bodies = append(bodies, m)
				mu.Unlock()
				_, eos := m["ignore_eos"]
				_, minT := m["min_tokens"]
				if tc.refuse && (eos || minT) {
					w.WriteHeader(http.StatusBadRequest)
					io.WriteString(w, `{"error":{"message":"unrecognized request argument supplied: ignore_eos"}}`)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, content(" a")+done)
			}))
			defer srv.Close()
			s, err := Open(context.Background(), Config{URL: srv.URL + "/v1", Model: "m", IgnoreEOS: tc.ignoreEOS,
				Workload: workload.Config{InputTokens: workload.Fixed(4), OutputTokens: workload.Fixed(8)}}, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for i := range 2 {
				if _, err := s.Do(context.Background(), subject.Request{Index: i}); err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(bodies) != tc.probes+2 {
				t.Fatalf("%d requests, want %d one-token ones and the run's 2", len(bodies), tc.probes)
			}
			for _, b := range bodies[tc.probes:] {
				var got []string
				for _, k := range []string{"ignore_eos", "min_tokens"} {
					if _, ok := b[k]; ok {
						got = append(got, k)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("request has %v, want %v", got, tc.want)
				}
				if v, ok := b["min_tokens"]; ok && v != b["max_tokens"] {
					t.Errorf("min_tokens %v, want max_tokens %v", v, b["max_tokens"])
				}
			}
			if note := s.Describe()["exact_output"].(string); !strings.Contains(note, tc.note) {
				t.Errorf("exact_output %q, want it to say %q", note, tc.note)
			}
		})
	}
}

// TestProbesUnderTheRunsTimeout: the requests Open sends (GET /models, the exact-output probe's
// one-token request) end at the run's timeout of a call, or the subject's, not at a fixed 30 s,
// and a stalled server's error says it was the probe and which deadline.
func TestProbesUnderTheRunsTimeout(t *testing.T) {
	const wait = 300 * time.Millisecond
	for _, tc := range []struct {
		name     string
		stall    string // the path that never answers
		run, cfg time.Duration
		want     []string // in the error
	}{
		// the model list never answers: the open fails at the run's timeout
		{name: "models", stall: "/v1/models", run: wait, want: []string{"exact-output probe's GET", "/v1/models", "300ms", "the run's timeout (--timeout"}},
		// the model list names an unknown server, whose one-token request never answers
		{name: "one-token request", stall: "/v1/chat/completions", run: wait, want: []string{"exact-output probe's one-token request", "300ms", "the run's timeout"}},
		// the shorter of the run's and the subject's timeouts
		{name: "subject's timeout", stall: "/v1/models", run: time.Hour, cfg: wait, want: []string{"300ms", "the subject's timeout"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == tc.stall {
					io.Copy(io.Discard, r.Body) // the server sees the client go only once it has read the body
					<-r.Context().Done()
					return
				}
				io.WriteString(w, `{"data":[{"id":"m","owned_by":"acme"}]}`)
			}))
			defer srv.Close()
			kind, _ := subject.Lookup("openai")
			start := time.Now()
			s, err := kind.Open(context.Background(), subject.Spec{Config: &Config{URL: srv.URL + "/v1", Model: "m", Timeout: tc.cfg}, Timeout: tc.run})
			if err == nil {
				s.Close()
				t.Fatal("opened against a stalled server")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want it to say %q", err, w)
				}
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("open failed after %v, with a deadline of %v", d, wait)
			}
		})
	}
}
