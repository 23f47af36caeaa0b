// Package mockserver is a reference OpenAI-compatible server with programmable timing. It answers
// POST /v1/chat/completions and /v1/completions (streamed as server-sent events or not) and
// GET /v1/models, draws each response's time to first token, inter-token gaps and length from
// seeded distributions, reports usage, injects faults (5xx answers, mid-stream disconnects, error
// events, stalls), and records when it actually emitted each event, so a test can compare what a
// client measured with what the server did.
//
// It is built to be cheaper than any client it serves: responses are formatted by appending to a
// reused buffer, content comes from precomputed strings, and events due at the same instant go out
// in one write. Each stream waits on its own runtime timer, scheduled from absolute due times so
// gaps do not drift; an event late on its schedule catches up at most half a gap at a time, so
// events with a gap between them never go out in one write.
package mockserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferbench/inferbench/internal/base/netstamp"
	"github.com/inferbench/inferbench/internal/workload"
)

// Config programs the server. The zero Config answers at once with 16 one-token events (or the
// request's max_tokens), reports usage when asked, and injects no faults.
type Config struct {
	// Model is the only model served; requests naming another get 404. Empty serves any name
	// (and lists "mock").
	Model string `yaml:"model" json:"model,omitempty"`
	// TTFT is the time from receiving a request to its first content event, in milliseconds.
	TTFT workload.Dist `yaml:"ttft_ms" json:"ttft_ms,omitzero"`
	// ITL is the gap between consecutive content events, in milliseconds.
	ITL workload.Dist `yaml:"itl_ms" json:"itl_ms,omitzero"`
	// OutputTokens is the response length in tokens, capped by the request's max_tokens. Zero
	// uses the request's max_tokens, or 16 when it has none.
	OutputTokens workload.Dist `yaml:"output_tokens" json:"output_tokens,omitzero"`
	// TokensPerEvent is the number of tokens in each content event (default 1).
	TokensPerEvent int `yaml:"tokens_per_event" json:"tokens_per_event,omitempty"`
	// Seed makes the draws deterministic: request n (in arrival order) gets the same TTFT,
	// gaps, length and faults for the same seed.
	Seed uint64 `yaml:"seed" json:"seed,omitempty"`
	// NoUsage never reports usage, like servers that ignore stream_options.include_usage.
	NoUsage bool `yaml:"no_usage" json:"no_usage,omitempty"`
	// UsageOffset is added to the completion tokens usage reports (at least 0), as a server
	// whose usage disagrees with what it streamed: -2 reports two tokens fewer than it sent.
	UsageOffset int `yaml:"usage_offset" json:"usage_offset,omitempty"`

	// ErrorRate is the fraction of requests answered with ErrorStatus (default 500).
	ErrorRate   float64 `yaml:"error_rate" json:"error_rate,omitempty"`
	ErrorStatus int     `yaml:"error_status" json:"error_status,omitempty"`
	// DisconnectRate is the fraction of streams whose connection is closed mid-way, without
	// finishing the response.
	DisconnectRate float64 `yaml:"disconnect_rate" json:"disconnect_rate,omitempty"`
	// ErrorEventRate is the fraction of streams that send an error event mid-way and end.
	ErrorEventRate float64 `yaml:"error_event_rate" json:"error_event_rate,omitempty"`
	// StallRate is the fraction of responses that pause once, mid-way, for Stall.
	StallRate float64       `yaml:"stall_rate" json:"stall_rate,omitempty"`
	Stall     time.Duration `yaml:"stall" json:"stall,omitempty"`

	// Shape is the layout of the streamed chunks: that of one of the servers in Shapes ("vllm",
	// "sglang", "tgi", "llamacpp", "openai"), or "" for OpenAI's layout without its extra fields.
	// Every shape opens the stream with the first token, as those servers do.
	Shape string `yaml:"shape" json:"shape,omitempty"`

	// Capacity, with Slots above 0, times the responses by the capacity model (batch.go) instead
	// of TTFT and ITL: a request waits for a slot, and its tokens come at the ends of the
	// iterations of a batch whose length grows with it.
	Capacity Capacity `yaml:"capacity" json:"capacity,omitzero"`

	// ShortRate is the fraction of responses that stop early, with finish reason "stop", at a
	// uniformly drawn length below the one asked, as a model that reaches its end-of-sequence
	// token does; a request with ignore_eos, or min_tokens at its length, never stops early.
	ShortRate float64 `yaml:"short_rate" json:"short_rate,omitempty"`
	// RefuseExact answers a request that sets ignore_eos or min_tokens with HTTP 400, as an API
	// that takes neither does (OpenAI's: "unrecognized request argument"), and lists its model as
	// owned by "system", not "inferbench".
	RefuseExact bool `yaml:"refuse_exact" json:"refuse_exact,omitempty"`

	// PrefixCache models a server's prefix cache (cache.go): prompts are looked up block by block
	// in what the server has seen, over the server's life, and GET /metrics reports the prompt
	// tokens looked up and found under vLLM's names (vllm:prefix_cache_queries, _hits). A second
	// run sending the same prompts finds them: a warm cache.
	PrefixCache bool `yaml:"prefix_cache" json:"prefix_cache,omitempty"`

	// Record is the number of requests whose emit times are kept for Emissions (0: none).
	// Later requests are counted but not kept.
	Record int `yaml:"record" json:"record,omitempty"`
}

// ParseTiming sets TTFT, ITL and OutputTokens from distributions written as text
// (workload.ParseDist); "" leaves one as it is. An error names the flag of the command line
// that sets it: --ttft-ms, --itl-ms or --output-tokens.
func (c *Config) ParseTiming(ttft, itl, output string) error {
	for _, p := range []struct {
		flag, s string
		d       *workload.Dist
	}{{"--ttft-ms", ttft, &c.TTFT}, {"--itl-ms", itl, &c.ITL}, {"--output-tokens", output, &c.OutputTokens}} {
		if p.s == "" {
			continue
		}
		d, err := workload.ParseDist(p.s)
		if err != nil {
			return fmt.Errorf("%s: %v", p.flag, err)
		}
		*p.d = d
	}
	return nil
}

// Validate reports a configuration the server cannot honour.
func (c Config) Validate() error {
	for name, d := range map[string]workload.Dist{"ttft_ms": c.TTFT, "itl_ms": c.ITL, "output_tokens": c.OutputTokens} {
		if err := d.Validate(); err != nil {
			return fmt.Errorf("mockserver %s: %w", name, err)
		}
	}
	if err := c.Capacity.Validate(); err != nil {
		return err
	}
	for name, r := range map[string]float64{"short_rate": c.ShortRate, "error_rate": c.ErrorRate, "disconnect_rate": c.DisconnectRate, "error_event_rate": c.ErrorEventRate, "stall_rate": c.StallRate} {
		if r < 0 || r > 1 {
			return fmt.Errorf("mockserver %s: %v is not a fraction between 0 and 1", name, r)
		}
	}
	if c.ErrorStatus != 0 && (c.ErrorStatus < 400 || c.ErrorStatus > 599) {
		return fmt.Errorf("mockserver error_status: %d is not a 4xx or 5xx status", c.ErrorStatus)
	}
	if err := checkShape(c.Shape); err != nil {
		return err
	}
	if c.TokensPerEvent < 0 || c.Record < 0 || c.Stall < 0 {
		return fmt.Errorf("mockserver: tokens_per_event, record and stall must not be negative")
	}
	return nil
}

// Emission is the server's own record of one request.
type Emission struct {
	ID           string      `json:"id"`
	Stream       bool        `json:"stream"`
	Status       int         `json:"status"`
	Fault        string      `json:"fault,omitempty"` // "error", "disconnect", "error_event", "stall"
	Received     time.Time   `json:"received"`        // when the request's last byte arrived (kernel receive time under Serve): the TTFT clock starts here
	FirstToken   time.Time   `json:"first_token"`     // when the first content event was sent
	End          time.Time   `json:"end"`             // when the last byte was sent
	Events       []time.Time `json:"events"`          // when each content event was sent
	InputTokens  int         `json:"input_tokens"`
	OutputTokens int         `json:"output_tokens"`
	// FirstDue and EndDue are when the capacity model had the first and the last token ready
	// (zero without the model): the schedule the stream follows, as late as the machine makes it.
	FirstDue time.Time `json:"first_due,omitzero"`
	EndDue   time.Time `json:"end_due,omitzero"`
}

// Stats counts what the server has done.
type Stats struct {
	Requests    int64 // requests received on the completion endpoints
	Completed   int64 // responses finished normally
	Errors      int64 // injected error statuses
	Rejected    int64 // bad requests and unknown models
	Disconnects int64
	ErrorEvents int64
	Stalls      int64
	Events      int64 // content events sent
	Active      int64 // responses in progress now
	MaxActive   int64 // most responses in progress at once
	// Connections are the connections accepted (under Serve or Start), and Closed those closed
	// while the server was not stopping, by the client (or a reset) or by an injected disconnect:
	// a client that keeps one connection per stream has Connections equal to its concurrency
	// and Closed 0 (GET /debug/stats counts the connection asking).
	Connections int64
	Closed      int64
}

// Server is an OpenAI-compatible mock. Create it with New.
type Server struct {
	cfg      Config
	model    []byte        // JSON-quoted model name for responses
	contents [][]string    // contents[k-1]: content strings of k tokens
	seq      atomic.Uint64 // request counter: the seed stream of each request
	bufs     sync.Pool

	requests, completed, errors, rejected    atomic.Int64
	disconnects, errorEvents, stalls, events atomic.Int64
	active, maxActive                        atomic.Int64
	conns, closed                            atomic.Int64

	mu      sync.Mutex
	emitted []Emission

	// engine runs the capacity model (Config.Capacity); nil without one.
	engine *engine
	// cache is the prefix cache (Config.PrefixCache); nil without one.
	cache *prefixCache
}

// New returns a server for cfg. It panics when cfg is invalid; call Config.Validate first on
// user input.
func New(cfg Config) *Server {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	if cfg.TokensPerEvent == 0 {
		cfg.TokensPerEvent = 1
	}
	if cfg.ErrorStatus == 0 {
		cfg.ErrorStatus = http.StatusInternalServerError
	}
	name := cfg.Model
	if name == "" {
		name = "mock"
	}
	model, _ := json.Marshal(name)
	s := &Server{cfg: cfg, model: model}
	if cfg.Capacity.On() {
		// Its clock starts before any request can arrive.
		s.engine = newEngine(cfg.Capacity)
	}
	if cfg.PrefixCache {
		s.cache = newPrefixCache()
	}
	s.bufs.New = func() any { b := make([]byte, 0, 4096); return &b }
	// Precomputed event contents: for each token count, 256 strings of that many words, each
	// with its leading space, as tokenizers produce them. No JSON escaping is needed.
	r := rand.New(rand.NewPCG(cfg.Seed, 0xc0_17e7))
	s.contents = make([][]string, cfg.TokensPerEvent)
	for k := range s.contents {
		s.contents[k] = make([]string, 256)
		for i := range s.contents[k] {
			var b strings.Builder
			for range k + 1 {
				b.WriteByte(' ')
				b.WriteString(workload.Vocabulary[r.IntN(len(workload.Vocabulary))])
			}
			s.contents[k][i] = b.String()
		}
	}
	return s
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, true) })
	mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, false) })
	mux.HandleFunc("GET /v1/models", s.models)
	if s.cache != nil {
		mux.HandleFunc("GET /metrics", s.metrics)
	}
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /debug/stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Stats())
	})
	mux.HandleFunc("GET /debug/emits", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Emissions())
	})
	return mux
}

// Serve serves on ln until ctx is done, then closes the listener and every connection. It returns
// nil when ctx ended it.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler: s.Handler(), ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 5 * time.Minute,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
	}
	var closing atomic.Bool
	srv.ConnState = func(_ net.Conn, st http.ConnState) {
		switch {
		case st == http.StateNew:
			s.conns.Add(1)
		case st == http.StateClosed && !closing.Load():
			s.closed.Add(1)
		}
	}
	stop := context.AfterFunc(ctx, func() { closing.Store(true); srv.Close() })
	defer stop()
	err := srv.Serve(netstamp.Listen(ln))
	if ctx.Err() != nil && errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Start listens on addr ("127.0.0.1:0" when empty) and serves in the background until ctx is
// done. It returns the base URL of the API, such as "http://127.0.0.1:8000/v1".
func (s *Server) Start(ctx context.Context, addr string) (string, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("mockserver: %w", err)
	}
	go s.Serve(ctx, ln) //nolint:errcheck // Serve only fails when the listener does; ctx ends it.
	return "http://" + ln.Addr().String() + "/v1", nil
}

// Emissions returns a copy of the recorded requests, in the order they finished.
func (s *Server) Emissions() []Emission {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Emission(nil), s.emitted...)
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	return Stats{
		Requests: s.requests.Load(), Completed: s.completed.Load(), Errors: s.errors.Load(),
		Rejected: s.rejected.Load(), Disconnects: s.disconnects.Load(), ErrorEvents: s.errorEvents.Load(),
		Stalls: s.stalls.Load(), Events: s.events.Load(), Active: s.active.Load(), MaxActive: s.maxActive.Load(),
		Connections: s.conns.Load(), Closed: s.closed.Load(),
	}
}

func (s *Server) record(e *Emission) {
	if s.cfg.Record == 0 {
		return
	}
	s.mu.Lock()
	if len(s.emitted) < s.cfg.Record {
		s.emitted = append(s.emitted, *e)
	}
	s.mu.Unlock()
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	// A client knows what a server owned by "inferbench" takes (ignore_eos, min_tokens); one
	// that refuses them is some other API, which a client must ask.
	owner := "inferbench"
	if s.cfg.RefuseExact {
		owner = "system"
	}
	fmt.Fprintf(w, `{"object":"list","data":[{"id":%s,"object":"model","created":0,"owned_by":%q}]}`, s.model, owner)
}
