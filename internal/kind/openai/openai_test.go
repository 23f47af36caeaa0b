package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/subject"
)

// fake is an httptest server answering every request with body (an SSE stream when it starts
// with "data:" or ":"), and keeping the requests it got.
type fake struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []map[string]any
	hdrs []http.Header
}

func newFake(t *testing.T, status int, body string) *fake {
	t.Helper()
	f := &fake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet { // no /v1/models: the subject asks for max_tokens only
			http.NotFound(w, r)
			return
		}
		var m map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("request body is not JSON: %v: %s", err, b)
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, m)
		f.hdrs = append(f.hdrs, r.Header.Clone())
		f.mu.Unlock()
		if strings.HasPrefix(body, "data:") || strings.HasPrefix(body, ":") || strings.HasPrefix(body, "event:") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(f.Close)
	return f
}

// req returns the i-th request body the fake got.
func (f *fake) req(i int) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reqs[i]
}

func (f *fake) hdr(i int) http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hdrs[i]
}

func open(t *testing.T, cfg Config) *Subject {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "m"
	}
	s, err := Open(context.Background(), cfg, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

const role = `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n"

func content(s string) string {
	return `data: {"choices":[{"index":0,"delta":{"content":` + fmt.Sprintf("%q", s) + `},"finish_reason":null}],"usage":null}` + "\n\n"
}

const (
	finish = `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	done   = "data: [DONE]\n\n"
)

func usage(in, out int) string {
	return fmt.Sprintf(`data: {"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", in, out, in+out)
}

// rawUsage is a usage chunk whose completion_tokens is written as given (prompt_tokens 3).
func rawUsage(out string) string {
	return `data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":` + out + `}}` + "\n\n"
}

type streamCase struct {
	name       string
	body       string
	tokens     []int // tokens per content event
	output     int
	input      int // 0: the workload's estimate
	counted    bool
	wantErr    error
	wantStatus int
}

// failed reports whether the case ends before token counts are set.
func (tt streamCase) failed() bool { return tt.wantStatus != 0 || errors.Is(tt.wantErr, ErrStream) }

func TestStreamTokens(t *testing.T) {
	tests := []streamCase{
		// Role-only and empty chunks are not tokens; usage is authoritative.
		{name: "usage", body: role + content("") + content(" a") + content(" b") + finish + usage(7, 2) + done,
			tokens: []int{1, 1}, output: 2, input: 7},
		// Without usage, content events are counted and the observation says so.
		{name: "no usage", body: role + content(" a") + content(" b") + content(" c") + finish + done,
			tokens: []int{1, 1, 1}, output: 3, counted: true},
		// Events carrying several tokens: usage is spread over the events.
		{name: "multi-token", body: content(" a b c") + content(" d e") + usage(1, 5) + done,
			tokens: []int{3, 2}, output: 5, input: 1},
		// Keep-alive comments and a trailing stream without [DONE] after a finish_reason.
		{name: "keep-alive, no [DONE]", body: ": ping\n\n" + content(" a") + ": ping\n\n" + finish,
			tokens: []int{1}, output: 1, counted: true},
		// Completions stream "text"; reasoning content counts as generated tokens.
		{name: "text and reasoning", body: `data: {"choices":[{"text":" x"}]}` + "\n\n" +
			`data: {"choices":[{"delta":{"reasoning_content":"hmm"}}]}` + "\n\n" + usage(3, 2) + done,
			tokens: []int{1, 1}, output: 2, input: 3},
		// A malformed chunk is counted as an error, and the rest of the stream is still read.
		{name: "malformed", body: content(" a") + "data: {not json\n\n" + content(" b") + done,
			tokens: []int{1, 1}, output: 2, counted: true, wantErr: ErrMalformed},
		// A negative usage count is a malformed chunk, not "no usage" (which it used to be read as).
		{name: "negative usage", body: content(" a") + finish + usage(3, -2) + done,
			tokens: []int{1}, output: 1, counted: true, wantErr: ErrMalformed},
		// A usage count that is not a whole number of tokens within bounds is a malformed chunk,
		// not 0 tokens with the request ok (NaN and 1e400 used to read as 0, 2.5 as 2).
		{name: "NaN usage", body: content(" a") + finish + rawUsage("NaN") + done,
			tokens: []int{1}, output: 1, counted: true, wantErr: ErrMalformed},
		{name: "1e400 usage", body: content(" a") + finish + rawUsage("1e400") + done,
			tokens: []int{1}, output: 1, counted: true, wantErr: ErrMalformed},
		{name: "1e20 usage", body: content(" a") + finish + rawUsage("1e20") + done,
			tokens: []int{1}, output: 1, counted: true, wantErr: ErrMalformed},
		{name: "-0.5 usage", body: content(" a") + finish + rawUsage("-0.5") + done,
			tokens: []int{1}, output: 1, counted: true, wantErr: ErrMalformed},
		{name: "2.5 usage", body: content(" a") + finish + rawUsage("2.5") + done,
			tokens: []int{1}, output: 1, counted: true, wantErr: ErrMalformed},
		// A whole number written as a float is a count.
		{name: "2.0 usage", body: content(" a") + content(" b") + finish + rawUsage("2.0") + done,
			tokens: []int{1, 1}, output: 2, input: 3},
		// The stream ends without [DONE] or a finish reason.
		{name: "incomplete", body: content(" a"), tokens: []int{1}, output: 1, counted: true, wantErr: ErrIncomplete},
		// An error object in the stream, as vLLM sends it.
		{name: "error chunk", body: content(" a") + `data: {"error":{"message":"out of memory","code":500}}` + "\n\n" + done,
			tokens: []int{1}, wantErr: ErrStream},
		// An error event.
		{name: "error event", body: "event: error\ndata: {\"message\":\"boom\"}\n\n", wantErr: ErrStream},
		// HTTP errors carry the status and the server's message.
		{name: "503", body: `{"error":{"message":"overloaded","type":"server_error"}}`, wantStatus: 503},
		{name: "400 detail", body: `{"detail":"max_tokens too large"}`, wantStatus: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := 200
			if tt.wantStatus != 0 {
				status = tt.wantStatus
			}
			f := newFake(t, status, tt.body)
			s := open(t, Config{URL: f.URL + "/v1"})
			o, err := s.Do(context.Background(), subject.Request{Index: 3})
			if tt.wantStatus != 0 {
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode() != tt.wantStatus {
					t.Fatalf("err = %v, want status %d", err, tt.wantStatus)
				}
				if se.Message == "" {
					t.Errorf("status error has no message")
				}
			} else if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if o.Start.IsZero() || o.End.Before(o.Start) {
				t.Errorf("start %v end %v", o.Start, o.End)
			}
			var got []int
			for i, e := range o.Tokens {
				got = append(got, e.Tokens)
				if e.At.Before(o.Start) || e.At.After(o.End) || (i > 0 && e.At.Before(o.Tokens[i-1].At)) {
					t.Errorf("token event %d at %v outside [%v, %v] or out of order", i, e.At, o.Start, o.End)
				}
			}
			if diff := cmp.Diff(tt.tokens, got); diff != "" {
				t.Errorf("token events (-want +got):\n%s", diff)
			}
			if len(o.Tokens) > 0 && !o.FirstToken.Equal(o.Tokens[0].At) {
				t.Errorf("first token %v, first event %v", o.FirstToken, o.Tokens[0].At)
			}
			if tt.failed() {
				return
			}
			if o.OutputTokens != tt.output || o.TokensCounted != tt.counted {
				t.Errorf("output tokens %d (counted %v), want %d (counted %v)", o.OutputTokens, o.TokensCounted, tt.output, tt.counted)
			}
			in := tt.input
			if in == 0 {
				in = workload.DefaultInputTokens
			}
			if o.InputTokens != in {
				t.Errorf("input tokens %d, want %d", o.InputTokens, in)
			}
		})
	}
}

func TestRequestBody(t *testing.T) {
	t.Setenv("TEST_OPENAI_KEY", "sk-secret")
	f := newFake(t, 200, content(" a")+done)
	cfg := Config{
		URL: f.URL + "/v1/", Model: "llama", APIKeyEnv: "TEST_OPENAI_KEY", IgnoreEOS: &yes,
		Headers: map[string]string{"X-Team": "perf"}, Body: map[string]any{"temperature": 0.5},
		Workload: workload.Config{Seed: 9, CacheKey: "k", InputTokens: workload.Fixed(5), OutputTokens: workload.Fixed(64)},
	}
	s := open(t, cfg)
	if _, err := s.Do(context.Background(), subject.Request{Index: 4}); err != nil {
		t.Fatal(err)
	}
	src, _ := workload.Open(cfg.Workload, "")
	want := map[string]any{
		"model": "llama", "stream": true, "stream_options": map[string]any{"include_usage": true},
		"messages":   []any{map[string]any{"role": "user", "content": src.Prompt(4).Text}},
		"max_tokens": 64.0, "min_tokens": 64.0, "ignore_eos": true, "temperature": 0.5,
	}
	if diff := cmp.Diff(want, f.req(0)); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	h := f.hdr(0)
	if h.Get("Authorization") != "Bearer sk-secret" || h.Get("X-Team") != "perf" || h.Get("Accept") != "text/event-stream" {
		t.Errorf("headers: %v", h)
	}
	if d := fmt.Sprint(s.Describe()); strings.Contains(d, "sk-secret") {
		t.Errorf("Describe shows the key: %s", d)
	}

	// Completions without streaming or usage options.
	f2 := newFake(t, 200, `{"choices":[{"text":"one two three"}]}`)
	no := false
	s2 := open(t, Config{URL: f2.URL + "/v1", Endpoint: "completions", Stream: &no})
	o, err := s2.Do(context.Background(), subject.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f2.req(0)["prompt"].(string); !ok || f2.req(0)["stream"] != false || f2.req(0)["stream_options"] != nil {
		t.Errorf("completions request: %v", f2.req(0))
	}
	if o.OutputTokens != 3 || !o.TokensCounted || !o.FirstToken.IsZero() {
		t.Errorf("non-streamed observation: %+v", o)
	}
}

func TestOpenErrors(t *testing.T) {
	// A port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	tests := []struct {
		cfg Config
		p   subject.Params
		err string
	}{
		{Config{Model: "m"}, nil, "needs url"},
		{Config{URL: "127.0.0.1:8000", Model: "m"}, nil, "not an http(s) URL"},
		{Config{URL: "http://127.0.0.1:1/v1"}, nil, "needs model"},
		{Config{URL: "http://127.0.0.1:1/v1", Model: "m", Endpoint: "embeddings"}, nil, `endpoint "embeddings" unknown`},
		{Config{URL: "http://127.0.0.1:1/v1", Model: "m", APIKeyEnv: "TEST_OPENAI_UNSET_KEY"}, nil, "TEST_OPENAI_UNSET_KEY is empty or unset"},
		{Config{URL: "http://127.0.0.1:1/v1", Model: "m", Body: map[string]any{"max_tokens": 3}}, nil, "must not set max_tokens"},
		{Config{URL: "http://127.0.0.1:1/v1", Model: "m"}, subject.Params{"input_tokens": "wobble(3)"}, "parameter input_tokens"},
		{Config{URL: dead, Model: "m"}, nil, "cannot reach"},
	}
	for _, tt := range tests {
		start := time.Now()
		_, err := Open(context.Background(), tt.cfg, tt.p, "")
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Open(%+v) error = %v, want it to contain %q", tt.cfg, err, tt.err)
		}
		if time.Since(start) > 3*time.Second {
			t.Errorf("Open(%+v) took %v to fail", tt.cfg, time.Since(start))
		}
	}
}

func TestParamsOverride(t *testing.T) {
	f := newFake(t, 200, content(" a")+done)
	s, err := Open(context.Background(), Config{URL: f.URL + "/v1", Model: "a"},
		subject.Params{"model": "b", "input_tokens": 12, "output_tokens": "uniform(5, 6)", "concurrency": 64}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	o, err := s.Do(context.Background(), subject.Request{})
	if err != nil {
		t.Fatal(err)
	}
	mt := f.req(0)["max_tokens"].(float64)
	if f.req(0)["model"] != "b" || o.InputTokens != 12 || (mt != 5 && mt != 6) {
		t.Errorf("model %v, input %d, max_tokens %v", f.req(0)["model"], o.InputTokens, mt)
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, content(" a"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	// ignore_eos set: no exact-output probe, whose GET /models this stream would stall
	s := open(t, Config{URL: srv.URL + "/v1", Timeout: 100 * time.Millisecond, IgnoreEOS: &no})
	start := time.Now()
	o, err := s.Do(context.Background(), subject.Request{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline error", err)
	}
	if len(o.Tokens) != 1 || time.Since(start) > 5*time.Second {
		t.Errorf("%d tokens after %v", len(o.Tokens), time.Since(start))
	}
}

func TestRegistered(t *testing.T) {
	k, ok := subject.Lookup("openai")
	if !ok {
		t.Fatal("kind openai not registered")
	}
	if _, ok := k.Config().(*Config); !ok {
		t.Errorf("Config returns %T", k.Config())
	}
	f := newFake(t, 200, content(" a")+done)
	cfg := &Config{URL: f.URL + "/v1", Model: "m"}
	s, err := k.Open(context.Background(), subject.Spec{Benchmark: "b", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// TestAgainstMockserver checks the whole path over real HTTP, faults included, and that the client
// and the server agree on every count.
func TestAgainstMockserver(t *testing.T) {
	for _, endpoint := range []string{"chat", "completions"} {
		ms := mockserver.New(mockserver.Config{
			Model: "mock", TTFT: workload.Fixed(2), ITL: workload.Fixed(1), OutputTokens: workload.Dist{Kind: "uniform", Min: 4, Max: 12},
			TokensPerEvent: 2, Seed: 1, ErrorRate: 0.1, ErrorStatus: 503, DisconnectRate: 0.1, ErrorEventRate: 0.1,
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		base, err := ms.Start(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		s := open(t, Config{URL: base, Model: "mock", Endpoint: endpoint, Workload: workload.Config{OutputTokens: workload.Fixed(10)}})
		var mu sync.Mutex
		counts := map[string]int{}
		var wg sync.WaitGroup
		for i := range 200 {
			wg.Go(func() {
				o, err := s.Do(ctx, subject.Request{Index: i})
				mu.Lock()
				defer mu.Unlock()
				var se *StatusError
				switch {
				case err == nil:
					counts["ok"]++
					if o.TokensCounted || o.OutputTokens < 4 || o.OutputTokens > 10 || len(o.Tokens) != (o.OutputTokens+1)/2 {
						t.Errorf("observation: %d tokens (counted %v) in %d events", o.OutputTokens, o.TokensCounted, len(o.Tokens))
					}
					if ttft := o.FirstToken.Sub(o.Start); ttft < 2*time.Millisecond {
						t.Errorf("TTFT %v below the server's 2ms", ttft)
					}
				case errors.As(err, &se):
					counts[fmt.Sprint(se.Code)]++
				case errors.Is(err, ErrIncomplete):
					counts["incomplete"]++
				case errors.Is(err, ErrStream):
					counts["stream"]++
				default:
					t.Errorf("unexpected error: %v", err)
				}
			})
		}
		wg.Wait()
		// The client can see [DONE] before the server's handler returns.
		st := ms.Stats()
		for i := 0; i < 200 && st.Active > 0; i++ {
			time.Sleep(10 * time.Millisecond)
			st = ms.Stats()
		}
		t.Logf("%s: %v; server %+v", endpoint, counts, st)
		if counts["503"] == 0 || counts["incomplete"] == 0 || counts["stream"] == 0 || counts["ok"] < 100 {
			t.Errorf("%s: outcomes %v: want some of each fault and mostly successes", endpoint, counts)
		}
		// Client and server agree exactly.
		if int64(counts["503"]) != st.Errors || int64(counts["incomplete"]) != st.Disconnects ||
			int64(counts["stream"]) != st.ErrorEvents || int64(counts["ok"]) != st.Completed {
			t.Errorf("client %v, server %+v", counts, st)
		}
	}
}

func TestErrorKind(t *testing.T) {
	tests := []struct {
		err  error
		kind string
	}{
		{&StatusError{Code: 429}, "http_429"},
		{fmt.Errorf("x: %w", &StatusError{Code: 503}), "http_503"},
		{fmt.Errorf("%w (after 1s)", context.DeadlineExceeded), "timeout"},
		{context.Canceled, "canceled"},
		{fmt.Errorf("%w: bad", ErrMalformed), "malformed_stream"},
		{ErrIncomplete, "incomplete_stream"},
		{fmt.Errorf("%w: over", ErrTooLarge), "response_too_large"},
		{fmt.Errorf("%w: oom", ErrStream), "stream_error"},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, "connection"},
		{errors.New("other"), "error"},
	}
	for _, tt := range tests {
		e := &Error{Err: tt.err}
		if got := e.Kind(); got != tt.kind {
			t.Errorf("Kind(%v) = %q, want %q", tt.err, got, tt.kind)
		}
		if !strings.HasPrefix(e.Error(), "openai: ") || !errors.Is(e, tt.err) {
			t.Errorf("Error() = %q, or it does not unwrap", e.Error())
		}
	}
}
