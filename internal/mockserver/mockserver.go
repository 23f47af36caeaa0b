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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferbench/inferbench/internal/netstamp"
	"github.com/inferbench/inferbench/internal/readall"
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
	for name, r := range map[string]float64{"error_rate": c.ErrorRate, "disconnect_rate": c.DisconnectRate, "error_event_rate": c.ErrorEventRate, "stall_rate": c.StallRate} {
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
	fmt.Fprintf(w, `{"object":"list","data":[{"id":%s,"object":"model","created":0,"owned_by":"inferbench"}]}`, s.model)
}

// request is the part of a completion request the server reads.
type request struct {
	Model               string            `json:"model"`
	Messages            []json.RawMessage `json:"messages"`
	Prompt              json.RawMessage   `json:"prompt"`
	Stream              bool              `json:"stream"`
	MaxTokens           *int              `json:"max_tokens"`
	MaxCompletionTokens *int              `json:"max_completion_tokens"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// plan is what the server will do for one request, drawn before anything is sent.
type plan struct {
	ttft       time.Duration
	gaps       []time.Duration // gaps[k]: wait before content event k+1 (k >= 0)
	events     int
	tokens     int
	finish     string
	cutAt      int // disconnect before this event (-1: never)
	errorAt    int // error event before this event (-1: never)
	stallAt    int // stall before this event (-1: never)
	fault      string
	errorState bool
	seq        uint64
}

func (s *Server) draw(seq uint64, maxTokens int) plan {
	r := rand.New(rand.NewPCG(s.cfg.Seed, workload.Mix(seq)))
	p := plan{cutAt: -1, errorAt: -1, stallAt: -1, finish: "stop", seq: seq}
	// Every draw happens in the same order for every request, so a seed fixes them all.
	p.errorState = r.Float64() < s.cfg.ErrorRate
	n := maxTokens
	if !s.cfg.OutputTokens.IsZero() {
		n = s.cfg.OutputTokens.Int(r)
		if maxTokens > 0 && n >= maxTokens {
			n = maxTokens
		}
	} else if n <= 0 {
		n = 16
	}
	p.tokens = max(n, 1)
	if maxTokens > 0 && p.tokens == maxTokens {
		p.finish = "length"
	}
	tpe := s.cfg.TokensPerEvent
	p.events = (p.tokens + tpe - 1) / tpe
	p.ttft = ms(s.cfg.TTFT.Sample(r))
	if !s.cfg.ITL.IsZero() && p.events > 1 {
		p.gaps = make([]time.Duration, p.events-1)
		for i := range p.gaps {
			p.gaps[i] = ms(s.cfg.ITL.Sample(r))
		}
	}
	at := func() int { return r.IntN(p.events) }
	if r.Float64() < s.cfg.DisconnectRate {
		p.cutAt, p.fault = at(), "disconnect"
	} else if r.Float64() < s.cfg.ErrorEventRate {
		p.errorAt, p.fault = at(), "error_event"
	}
	if r.Float64() < s.cfg.StallRate && s.cfg.Stall > 0 {
		p.stallAt = at()
		if p.fault == "" {
			p.fault = "stall"
		}
	}
	return p
}

// maxRequestBody bounds the request body the server reads.
const maxRequestBody = 64 << 20

// connKey holds the request's connection in its context (Serve), for its receive timestamps.
type connKey struct{}

// arrival returns when the bytes of the request read so far reached the server: the kernel's
// receive time of the newest of them when the connection has one (so time spent waiting for the
// handler to run counts), else now.
func arrival(r *http.Request) time.Time {
	now := time.Now()
	if st, ok := r.Context().Value(connKey{}).(netstamp.Stamper); ok {
		if t := st.Stamp(); !t.IsZero() && t.Before(now) && now.Sub(t) < time.Minute {
			return t
		}
	}
	return now
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request, chat bool) {
	s.requests.Add(1)
	seq := s.seq.Add(1)

	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	body, err := readall.Into(r.Body, (*bp)[:0], maxRequestBody, "request body")
	*bp = body[:0]
	// The request is whole when its last byte arrived: the TTFT clock starts there, not when
	// its headers did (a body sent later, or slowly, is the client's time, not the server's).
	received := arrival(r)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "reading the request: "+err.Error())
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "the request is not valid JSON: "+err.Error())
		return
	}
	if s.cfg.Model != "" && req.Model != s.cfg.Model {
		s.fail(w, http.StatusNotFound, "model_not_found", fmt.Sprintf("The model `%s` does not exist.", req.Model))
		return
	}
	if chat && len(req.Messages) == 0 {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "messages is required")
		return
	}
	maxTokens := 0
	if req.MaxCompletionTokens != nil {
		maxTokens = *req.MaxCompletionTokens
	} else if req.MaxTokens != nil {
		maxTokens = *req.MaxTokens
	}
	if maxTokens < 0 {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "max_tokens must not be negative")
		return
	}
	p := s.draw(seq, maxTokens)
	e := &Emission{ID: strconv.FormatUint(seq, 10), Stream: req.Stream, Received: received, InputTokens: inputTokens(chat, req), OutputTokens: p.tokens, Status: http.StatusOK, Fault: p.fault}
	if p.errorState {
		s.errors.Add(1)
		e.Status, e.Fault = s.cfg.ErrorStatus, "error"
		s.fail(w, s.cfg.ErrorStatus, "server_error", "injected error")
		e.End = time.Now()
		s.record(e)
		return
	}
	if p.stallAt >= 0 {
		s.stalls.Add(1)
	}
	if a := s.active.Add(1); a > s.maxActive.Load() {
		// A lost race here only under-reports the maximum by a request or two.
		s.maxActive.Store(a)
	}
	defer s.active.Add(-1)
	if s.cfg.Record > 0 {
		e.Events = make([]time.Time, 0, p.events)
	}
	if req.Stream {
		includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage && !s.cfg.NoUsage
		s.stream(r.Context(), w, chat, includeUsage, &p, e, bp)
		return
	}
	s.whole(r.Context(), w, chat, &p, e, bp)
}

// fail answers with an OpenAI-style error object.
func (s *Server) fail(w http.ResponseWriter, status int, typ, msg string) {
	if status < 500 {
		s.rejected.Add(1)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": status}})
	w.Write(b) //nolint:errcheck // the client may be gone
}

// stream sends the response as server-sent events. Events due at the same instant (no gap
// between them) are written together and flushed once; each flush stamps the events it carried.
// An event with a gap before it is written on its own, at least half the gap after the one
// before, even when the schedule is behind.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, chat, includeUsage bool, p *plan, e *Emission, bp *[]byte) {
	fl, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)

	sh := shapeOf(s.cfg.Shape, chat)
	head := s.chunkHead(chat, e.ID)
	nullUsage := sh.alwaysUsage || (sh.usageNull && includeUsage)
	usageChunk := includeUsage && !sh.usageInLast
	buf := (*bp)[:0]
	defer func() { *bp = buf[:0] }()
	// What went out together: content events written since the last flush (pending), events
	// written in one flush with the one before them (together), and whether the first two were.
	pending, together, first, flushed := 0, 0, false, false
	flush := func() {
		if fl != nil {
			fl.Flush()
		}
		if pending > 0 {
			now := time.Now()
			if e.FirstToken.IsZero() {
				e.FirstToken = now
			}
			if e.Events != nil {
				for range pending {
					e.Events = append(e.Events, now)
				}
			}
			if !flushed {
				first, flushed = pending > 1, true
			}
			together += pending - 1
			pending = 0
		}
	}
	send := func() {
		w.Write(buf) //nolint:errcheck // a gone client shows as ctx done
		buf = buf[:0]
	}
	// closeChunk ends a chunk: usage (the figure or null), llama.cpp's timings, the shape's extra
	// fields, and in the last chunk before [DONE] what the server wrote together (EmitField).
	closeChunk := func(b []byte, usage, last bool) []byte {
		switch {
		case usage:
			b = append(b, `,"usage":`...)
			b = appendUsage(b, e.InputTokens, p.tokens)
		case nullUsage:
			b = append(b, `,"usage":null`...)
		}
		if last && sh.timings {
			b = s.appendTimings(b, e, p.tokens)
		}
		b = append(b, sh.extra...)
		if last {
			tog, fst := together+max(pending-1, 0), first
			if !flushed {
				fst = pending > 1
			}
			b = append(b, `,"`+EmitField+`":{"first_together":`...)
			b = strconv.AppendBool(b, fst)
			b = append(b, `,"together":`...)
			b = strconv.AppendInt(b, int64(tog), 10)
			b = append(b, '}')
		}
		return append(b, "}\n\n"...)
	}
	flush() // the headers: a stream sends nothing more before its first token

	var timer *time.Timer
	var last time.Time // when the event before was flushed
	due := e.Received.Add(p.ttft)
	for k := range p.events {
		at := due
		if k > 0 && p.gaps != nil {
			gap := p.gaps[k-1]
			due = due.Add(gap)
			at = due
			// A late event is followed by the next at least half its gap later, and each is
			// flushed on its own (below): the schedule catches up, but a client does not read
			// two events of a gap as one (a gap of zero in itl_ms). A timer ends late by up to
			// a millisecond (the runtime's netpoller waits in whole milliseconds), so at a 1 ms
			// gap a stream written by the schedule alone sent pairs together.
			if soonest := last.Add(gap / 2); gap > 0 && soonest.After(at) {
				at = soonest
			}
		}
		if k == p.stallAt {
			due = due.Add(s.cfg.Stall)
			at = at.Add(s.cfg.Stall)
		}
		if wait := time.Until(at); wait > 0 {
			flush()
			if timer == nil {
				timer = time.NewTimer(wait)
				defer timer.Stop()
			} else {
				timer.Reset(wait)
			}
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
		switch k {
		case p.cutAt:
			flush()
			s.disconnects.Add(1)
			e.Fault, e.End = "disconnect", time.Now()
			s.record(e)
			panic(http.ErrAbortHandler) // closes the connection without ending the response
		case p.errorAt:
			buf = append(buf, `data: {"error":{"message":"injected stream error","type":"server_error","code":500}}`+"\n\n"+"data: [DONE]\n\n"...)
			send()
			flush()
			s.errorEvents.Add(1)
			e.Fault, e.End = "error_event", time.Now()
			s.record(e)
			return
		}
		if k == 0 {
			// Servers open the stream when the first token is ready: vLLM, SGLang and
			// llama.cpp write the role-only chunk just before it, TGI a comment. (Sent at once,
			// before the TTFT wait, it made clients that time the first chunk read TTFT early.)
			buf = append(buf, sh.opening...)
			if sh.role != "" {
				buf = closeChunk(append(append(buf, head...), sh.role...), false, false)
			}
		}
		buf = append(buf, head...)
		buf = append(buf, sh.textOpen...)
		buf = append(buf, s.content(p, k)...)
		pending++
		if k == p.events-1 && sh.lastClose != "" { // TGI: the last content chunk finishes
			buf = append(buf, fmt.Sprintf(sh.lastClose, p.finish)...)
			buf = closeChunk(buf, false, !usageChunk)
		} else {
			buf = append(buf, sh.textClose...)
			buf = closeChunk(buf, false, false)
		}
		send()
		if k < p.events-1 && p.gaps != nil && p.gaps[k] > 0 {
			flush() // a gap follows: this event goes out alone, whenever the next is due
			last = time.Now()
		}
	}
	s.events.Add(int64(p.events))
	if sh.lastClose == "" {
		buf = append(buf, head...)
		buf = append(buf, fmt.Sprintf(sh.finish, p.finish)...)
		buf = closeChunk(buf, sh.usageInLast && !s.cfg.NoUsage, !usageChunk)
	}
	if usageChunk {
		// The usage chunk has no choices, as in OpenAI's API.
		buf = append(buf, head[:len(head)-len(`"choices":[{"index":0,`)]...)
		buf = append(buf, `"choices":[]`...)
		nullUsage = false
		buf = closeChunk(buf, true, true)
	}
	buf = append(buf, "data: [DONE]\n\n"...)
	send()
	// No flush: the server writes what is left with the chunked terminator when the handler
	// returns, in one write, so a client reading to the end of the body (as it must to keep the
	// connection) does not wait for a second one.
	fl = nil
	flush()
	e.End = time.Now()
	s.completed.Add(1)
	s.record(e)
}

// EmitField is the field of a stream's last chunk before [DONE] where the server says which
// content events it wrote together: {"first_together": bool, "together": n}, n being the content
// events written in one write with the one before them. A client that reads two events in one
// read cannot tell otherwise whether the server sent them together or it read them late; the
// openai subject reads it (its EmitField) for the coalescing warning.
const EmitField = "mock_emit"

// appendTimings appends llama.cpp's timings object: the prompt (to the first token) and the
// generation (since), as this server timed them.
func (s *Server) appendTimings(b []byte, e *Emission, tokens int) []byte {
	now := time.Now()
	prompt, predicted := 0.0, 0.0
	if !e.FirstToken.IsZero() {
		prompt, predicted = ms2(e.FirstToken.Sub(e.Received)), ms2(now.Sub(e.FirstToken))
	} else {
		prompt = ms2(now.Sub(e.Received))
	}
	b = append(b, `,"timings":{"cache_n":0,"prompt_n":`...)
	b = strconv.AppendInt(b, int64(e.InputTokens), 10)
	b = append(b, `,"prompt_ms":`...)
	b = strconv.AppendFloat(b, prompt, 'f', 3, 64)
	b = append(b, `,"predicted_n":`...)
	b = strconv.AppendInt(b, int64(tokens), 10)
	b = append(b, `,"predicted_ms":`...)
	b = strconv.AppendFloat(b, predicted, 'f', 3, 64)
	b = append(b, `,"predicted_per_token_ms":`...)
	b = strconv.AppendFloat(b, predicted/float64(max(tokens, 1)), 'f', 3, 64)
	return append(b, '}')
}

func ms2(d time.Duration) float64 { return float64(d) / 1e6 }

// whole waits as long as the stream would have taken and answers with one JSON body.
func (s *Server) whole(ctx context.Context, w http.ResponseWriter, chat bool, p *plan, e *Emission, bp *[]byte) {
	wait := p.ttft
	for _, g := range p.gaps {
		wait += g
	}
	if p.stallAt >= 0 {
		wait += s.cfg.Stall
	}
	if wait > 0 {
		t := time.NewTimer(time.Until(e.Received.Add(wait)))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
	if p.cutAt >= 0 {
		s.disconnects.Add(1)
		e.Fault, e.End = "disconnect", time.Now()
		s.record(e)
		panic(http.ErrAbortHandler)
	}
	buf := (*bp)[:0]
	defer func() { *bp = buf[:0] }()
	id := e.ID
	if chat {
		buf = append(buf, `{"id":"chatcmpl-`+id+`","object":"chat.completion","created":`...)
	} else {
		buf = append(buf, `{"id":"cmpl-`+id+`","object":"text_completion","created":`...)
	}
	buf = strconv.AppendInt(buf, e.Received.Unix(), 10)
	buf = append(buf, `,"model":`...)
	buf = append(buf, s.model...)
	if chat {
		buf = append(buf, `,"choices":[{"index":0,"message":{"role":"assistant","content":"`...)
	} else {
		buf = append(buf, `,"choices":[{"index":0,"text":"`...)
	}
	for k := range p.events {
		buf = append(buf, s.content(p, k)...)
	}
	if chat {
		buf = append(buf, `"}`...)
	} else {
		buf = append(buf, `"`...)
	}
	buf = append(buf, `,"logprobs":null,"finish_reason":"`+p.finish+`"}]`...)
	if !s.cfg.NoUsage {
		buf = append(buf, `,"usage":`...)
		buf = appendUsage(buf, e.InputTokens, p.tokens)
	}
	buf = append(buf, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(buf)))
	w.Write(buf) //nolint:errcheck // the client may be gone
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	e.End = time.Now()
	e.FirstToken = e.End
	if e.Events != nil {
		for range p.events {
			e.Events = append(e.Events, e.End)
		}
	}
	s.events.Add(int64(p.events))
	s.completed.Add(1)
	s.record(e)
}

// content returns the text of content event k.
func (s *Server) content(p *plan, k int) string {
	tpe := s.cfg.TokensPerEvent
	tokens := min(tpe, p.tokens-k*tpe)
	return s.contents[tokens-1][(workload.Mix(uint64(k))+p.seq)&255]
}

// chunkHead returns the start of every chunk of one response, up to the inside of its choice.
func (s *Server) chunkHead(chat bool, id string) []byte {
	b := make([]byte, 0, 128)
	if chat {
		b = append(b, `data: {"id":"chatcmpl-`+id+`","object":"chat.completion.chunk","created":`...)
	} else {
		b = append(b, `data: {"id":"cmpl-`+id+`","object":"text_completion","created":`...)
	}
	b = strconv.AppendInt(b, time.Now().Unix(), 10)
	b = append(b, `,"model":`...)
	b = append(b, s.model...)
	b = append(b, `,"choices":[{"index":0,`...)
	return b
}

func appendUsage(buf []byte, in, out int) []byte {
	buf = append(buf, `{"prompt_tokens":`...)
	buf = strconv.AppendInt(buf, int64(in), 10)
	buf = append(buf, `,"completion_tokens":`...)
	buf = strconv.AppendInt(buf, int64(out), 10)
	buf = append(buf, `,"total_tokens":`...)
	buf = strconv.AppendInt(buf, int64(in+out), 10)
	return append(buf, '}')
}

// inputTokens estimates the prompt length in words, as the workload package counts them; a prompt
// given as token ids counts its ids.
func inputTokens(chat bool, req request) int {
	n := 0
	if chat {
		for _, m := range req.Messages {
			var msg struct {
				Content json.RawMessage `json:"content"`
			}
			if json.Unmarshal(m, &msg) == nil {
				n += countContent(msg.Content)
			}
		}
		return n
	}
	return countContent(req.Prompt)
}

func countContent(raw json.RawMessage) int {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return workload.CountWords(s)
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return 0
	}
	n := 0
	for _, p := range parts {
		var part struct {
			Text string `json:"text"`
		}
		switch {
		case json.Unmarshal(p, &s) == nil:
			n += workload.CountWords(s)
		case len(p) > 0 && p[0] != '{' && p[0] != '[':
			n++ // a token id
		case json.Unmarshal(p, &part) == nil:
			n += workload.CountWords(part.Text)
		}
	}
	return n
}

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
