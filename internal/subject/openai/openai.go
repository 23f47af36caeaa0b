// Package openai is the subject kind "openai": it sends chat completion or completion requests to
// an OpenAI-compatible server (vLLM, SGLang, TGI, llama.cpp, Ollama, the OpenAI API, the
// mockserver) and observes each response as it streams: when it was sent, when the first content
// token arrived, when each content event arrived and how many tokens the server says it generated.
//
// Token counts come from the server's usage report (the subject asks for it with
// stream_options.include_usage); when the server reports none, content events are counted and the
// Observation says so. Role-only and empty chunks are not tokens. Error answers carry their HTTP
// status (StatusError), broken streams are errors of their own (ErrMalformed, ErrIncomplete,
// ErrStream), and so is a whole body over max_response_bytes (ErrTooLarge), so a run counts them
// and goes on.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferbench/inferbench/internal/netstamp"
	"github.com/inferbench/inferbench/internal/readall"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
	"github.com/valyala/fastjson"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

func init() {
	result.Define(
		result.Info{Name: "server_prompt_ms", Unit: "ms", Better: result.Lower, Doc: "llama.cpp: the server's own prompt-processing time of a request (timings.prompt_ms)"},
		result.Info{Name: "server_predicted_ms", Unit: "ms", Better: result.Lower, Doc: "llama.cpp: the server's own generation time of a request (timings.predicted_ms)"},
		result.Info{Name: "server_predicted_per_token_ms", Unit: "ms", Better: result.Lower, Doc: "llama.cpp: the server's generation time per generated token (timings.predicted_per_token_ms)"},
		result.Info{Name: load.ValueSendDelay, Unit: "ms", Better: result.Lower, Doc: "the client's delay from having a connection to the request's last byte written"},
		result.Info{Name: load.ValueReadDelay, Unit: "ms", Better: result.Lower, Doc: "the client's longest delay in a request from the kernel receiving response bytes to reading them"},
	)
	subject.Register(subject.Kind{
		Name:   "openai",
		Config: func() any { return &Config{} },
		Open: func(ctx context.Context, s subject.Spec) (subject.Subject, error) {
			cfg, _ := s.Config.(*Config)
			if cfg == nil {
				return nil, fmt.Errorf("openai: benchmark %s: subject needs url and model", s.Benchmark)
			}
			return Open(ctx, *cfg, s.Params, s.Dir)
		},
	})
}

// Config is the `subject:` block of an openai benchmark.
type Config struct {
	// URL is the base URL of the API, up to and including /v1: http://127.0.0.1:8000/v1.
	URL string `yaml:"url" json:"url"`
	// Model is the model name sent with every request.
	Model string `yaml:"model" json:"model"`
	// Endpoint is "chat" (POST /chat/completions, the default) or "completions".
	Endpoint string `yaml:"endpoint" json:"endpoint,omitempty"`
	// Stream asks for a server-sent event stream (default true). Without it there is no time to
	// first token or inter-token latency, only end-to-end latency.
	Stream *bool `yaml:"stream" json:"stream,omitempty"`
	// IncludeUsage sends stream_options.include_usage (default true). Turn it off for servers
	// that reject the option.
	IncludeUsage *bool `yaml:"include_usage" json:"include_usage,omitempty"`
	// IgnoreEOS asks the server to generate exactly max_tokens (a vLLM and SGLang extension).
	IgnoreEOS bool `yaml:"ignore_eos" json:"ignore_eos,omitempty"`
	// APIKeyEnv names the environment variable holding the API key, sent as a bearer token. The
	// key itself is never written to results or logs.
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env,omitempty"`
	// Timeout bounds each request, from sending to the end of the response (default 10m).
	Timeout time.Duration `yaml:"timeout" json:"timeout,omitempty"`
	// MaxConnections caps the connections to the server. The default follows the load: the
	// "concurrency" parameter, and no cap.
	MaxConnections int `yaml:"max_connections" json:"max_connections,omitempty"`
	// Headers are added to every request.
	Headers map[string]string `yaml:"headers" json:"headers,omitempty"`
	// Body holds extra fields merged into every request body (temperature, top_p, ...).
	Body map[string]any `yaml:"body" json:"body,omitempty"`
	// MaxResponseBytes bounds one whole (not streamed) response body (default 16 MiB); the bodies
	// being read at once are bounded together by 16 times it. A longer answer fails the request
	// with an error naming the limit.
	MaxResponseBytes int `yaml:"max_response_bytes" json:"max_response_bytes,omitempty"`
	// MetricsURL is the server's Prometheus endpoint, scraped during the scenario (default: the
	// server's /metrics when it answers with vLLM, SGLang, TGI or llama.cpp metrics; "none": off).
	MetricsURL string `yaml:"metrics_url" json:"metrics_url,omitempty"`
	// Workload chooses the prompts and their lengths.
	Workload workload.Config `yaml:"workload" json:"workload,omitzero"`
}

// StatusError is an error answer from the server.
type StatusError struct {
	Code    int    // HTTP status
	Message string // the server's message, when it gave one
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("HTTP %d %s", e.Code, http.StatusText(e.Code))
	}
	return fmt.Sprintf("HTTP %d: %s", e.Code, e.Message)
}

// StatusCode returns the HTTP status, so results can count errors by status.
func (e *StatusError) StatusCode() int { return e.Code }

// Errors of a stream that started well and ended badly. Returned errors wrap one of them.
var (
	ErrMalformed  = errors.New("malformed stream")               // an event that is not a valid chunk
	ErrIncomplete = errors.New("stream ended before [DONE]")     // the server closed or cut the stream
	ErrStream     = errors.New("server reported a stream error") // an error event in the stream
	// ErrTooLarge is a whole (not streamed) response body over max_response_bytes, or the
	// bodies being read at once over their shared bound.
	ErrTooLarge = errors.New("response too large")
)

// Subject sends one request per Do. It is safe for concurrent use.
type Subject struct {
	cfg          Config
	endpoint     string // full URL of the endpoint
	chat         bool
	stream       bool
	includeUsage bool
	auth         string // "Bearer <key>", or empty
	head         []byte // the request body up to the prompt
	client       *http.Client
	conns        *conns
	src          *workload.Source
	bufs         sync.Pool    // *[]byte: request and response bodies
	readers      sync.Pool    // *reader
	maxBody      int          // bound of one whole response body
	held         atomic.Int64 // bytes of whole response bodies being read, by all requests
}

var (
	_ subject.Subject   = (*Subject)(nil)
	_ subject.Describer = (*Subject)(nil)
	_ load.Arrivals     = (*Subject)(nil)
	_ load.Turner       = (*Subject)(nil)
)

// Open checks cfg, reads its workload and checks that the server accepts connections. Params may
// override the workload lengths ("input_tokens", "output_tokens" or its alias "max_new_tokens": a
// number or a distribution),
// "model" or its alias "model_id", "stream", and size the connection pool ("concurrency").
func Open(ctx context.Context, cfg Config, p subject.Params, dir string) (*Subject, error) {
	cfg.Model = p.String("model", p.String("model_id", cfg.Model)) // model_id: --model-id's name for it
	if v, ok := p["stream"].(bool); ok {
		cfg.Stream = &v
	}
	if v, ok := p["max_new_tokens"]; ok && p["output_tokens"] == nil {
		p = maps.Clone(p)
		p["output_tokens"] = v // --num-tokens-to-generate's name for it
	}
	for key, d := range map[string]*workload.Dist{"input_tokens": &cfg.Workload.InputTokens, "output_tokens": &cfg.Workload.OutputTokens} {
		if v, ok := p[key]; ok && v != nil {
			parsed, err := workload.ParseDist(fmt.Sprint(v))
			if err != nil {
				return nil, fmt.Errorf("openai: parameter %s: %w", key, err)
			}
			*d = parsed
		}
	}
	if cfg.URL == "" {
		return nil, errors.New("openai: subject needs url (the API base, e.g. http://127.0.0.1:8000/v1)")
	}
	// "{name}" in the URL is the scenario's parameter name; with a server: block, {port} is the
	// port drawn for the server.
	for k, v := range p {
		cfg.URL = strings.ReplaceAll(cfg.URL, "{"+k+"}", fmt.Sprint(v))
	}
	if i := strings.IndexByte(cfg.URL, '{'); i >= 0 {
		return nil, fmt.Errorf("openai: url %q names a parameter this scenario does not have", cfg.URL)
	}
	base, err := url.Parse(strings.TrimSuffix(cfg.URL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("openai: url %q is not an http(s) URL (want e.g. http://127.0.0.1:8000/v1)", cfg.URL)
	}
	if cfg.Model == "" {
		return nil, errors.New("openai: subject needs model (the name the server serves; GET /v1/models lists them)")
	}
	s := &Subject{cfg: cfg, stream: cfg.Stream == nil || *cfg.Stream, includeUsage: cfg.IncludeUsage == nil || *cfg.IncludeUsage}
	switch cfg.Endpoint {
	case "", "chat", "chat/completions":
		s.chat, s.endpoint = true, base.String()+"/chat/completions"
	case "completions":
		s.endpoint = base.String() + "/completions"
	default:
		return nil, fmt.Errorf("openai: endpoint %q unknown (want chat or completions)", cfg.Endpoint)
	}
	if cfg.APIKeyEnv != "" {
		key := os.Getenv(cfg.APIKeyEnv)
		if key == "" {
			return nil, fmt.Errorf("openai: api_key_env: environment variable %s is empty or unset", cfg.APIKeyEnv)
		}
		s.auth = "Bearer " + key
	}
	if cfg.Timeout == 0 {
		s.cfg.Timeout = 10 * time.Minute
	}
	switch {
	case cfg.MaxResponseBytes < 0:
		return nil, errors.New("openai: max_response_bytes must not be negative")
	case cfg.MaxResponseBytes == 0:
		s.maxBody = DefaultMaxResponseBytes
	default:
		s.maxBody = cfg.MaxResponseBytes
	}
	if s.src, err = workload.Open(cfg.Workload, dir); err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	if cfg.Workload.Images.Count > 0 && !s.chat {
		return nil, errors.New("openai: workload.images needs endpoint chat: a completion takes no images")
	}
	if s.head, err = s.bodyHead(); err != nil {
		return nil, err
	}
	s.bufs.New = func() any { b := make([]byte, 0, 8<<10); return &b }

	idle := max(cfg.MaxConnections, p.Int("concurrency", 0), p.Int("max_concurrency", 0), 1024)
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	s.conns = newConns(dialer)
	s.client = &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           s.conns.DialContext,
		MaxIdleConns:          idle,
		MaxIdleConnsPerHost:   idle,
		MaxConnsPerHost:       cfg.MaxConnections,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 0, // a long prefill is not an error; Timeout bounds the request
		DisableCompression:    true,
		ForceAttemptHTTP2:     true,
	}, CheckRedirect: checkRedirect}
	if err := s.reachable(ctx, base); err != nil {
		return nil, err
	}
	return s, nil
}

// reachable fails fast, with a clear message, when nothing listens at the server's address. The
// connection it opened serves the first request, when that comes soon and goes there directly.
func (s *Subject) reachable(ctx context.Context, u *url.URL) error {
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := s.conns.dial(ctx, "tcp", host)
	if err != nil {
		return fmt.Errorf("openai: cannot reach %s: %w (is the server running?)", u, err)
	}
	if u.Scheme != "http" || proxied(u) {
		return c.Close()
	}
	s.conns.keep(c)
	return nil
}

// proxied says whether requests to u go through a proxy.
func proxied(u *url.URL) bool {
	p, err := http.ProxyFromEnvironment(&http.Request{URL: u})
	return err != nil || p != nil
}

// bodyHead renders the fixed start of every request body.
func (s *Subject) bodyHead() ([]byte, error) {
	fields := map[string]any{}
	for k, v := range s.cfg.Body {
		fields[k] = v
	}
	fields["model"] = s.cfg.Model
	fields["stream"] = s.stream
	if s.stream && s.includeUsage {
		fields["stream_options"] = map[string]any{"include_usage": true}
	}
	if s.cfg.IgnoreEOS {
		fields["ignore_eos"] = true
	}
	for _, k := range []string{"messages", "prompt", "max_tokens", "max_completion_tokens"} {
		if _, ok := s.cfg.Body[k]; ok {
			return nil, fmt.Errorf("openai: body must not set %s: the workload does", k)
		}
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("openai: body: %w", err)
	}
	// Leave the object open: each request appends its prompt and max_tokens.
	b[len(b)-1] = ','
	return b, nil
}

// Arrivals returns when each request of a trace workload is due (load mode trace), or nil.
func (s *Subject) Arrivals() []time.Duration { return s.src.Arrivals() }

// Turns returns the requests of one session of a multi-turn workload (load mode sessions).
func (s *Subject) Turns() int { return s.src.Turns() }

// Describe returns what the subject talks to; never the API key.
func (s *Subject) Describe() map[string]any {
	return map[string]any{"url": s.cfg.URL, "model": s.cfg.Model, "endpoint": s.endpoint, "stream": s.stream,
		// How token counts were made, as each figure is stated.
		"token_counts": "input: the server's usage.prompt_tokens where it reports it, else " + s.src.Counted() +
			"; output: usage.completion_tokens, else content events (the output_tokens note says so)"}
}

// Close closes idle connections.
func (s *Subject) Close() error {
	s.conns.drop()
	s.client.CloseIdleConnections()
	return nil
}

// Do sends request r.Index's prompt and observes the response. Its errors are *Error values,
// whose Kind groups them for counting.
func (s *Subject) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	o, err := s.do(ctx, r)
	if err != nil {
		return o, &Error{Err: err}
	}
	return o, nil
}

// Error is a failed request.
type Error struct{ Err error }

func (e *Error) Error() string { return "openai: " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Kind names the error's class: "http_503", "timeout", "connection", "malformed_stream",
// "incomplete_stream", "stream_error", "response_too_large", "canceled" or "error". Results count errors by kind.
func (e *Error) Kind() string {
	var se *StatusError
	var ne net.Error
	switch {
	case errors.As(e.Err, &se):
		return fmt.Sprintf("http_%d", se.Code)
	case errors.Is(e.Err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(e.Err, context.Canceled):
		return "canceled"
	case errors.Is(e.Err, ErrMalformed):
		return "malformed_stream"
	case errors.Is(e.Err, ErrIncomplete):
		return "incomplete_stream"
	case errors.Is(e.Err, ErrStream):
		return "stream_error"
	case errors.Is(e.Err, ErrTooLarge):
		return "response_too_large"
	case errors.As(e.Err, &ne):
		return "connection"
	}
	return "error"
}

func (s *Subject) do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	p := s.src.Prompt(r.Index)
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	body, err := s.appendBody((*bp)[:0], p)
	*bp = body[:0]
	if err != nil {
		return subject.Observation{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return subject.Observation{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	// Servers close idle keep-alive connections (llama.cpp's after 5 s or 5 requests); a request
	// sent on one as it closes fails with nothing answered. Go resends such a request on a new
	// connection only when it is marked replayable, which an idempotency key does (the send time
	// is then the resend's: WroteRequest below).
	req.Header.Set("X-Idempotency-Key", idempotencyKey(r.Index))
	if s.stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	if s.auth != "" {
		req.Header.Set("Authorization", s.auth)
	}
	for k, v := range s.cfg.Headers {
		req.Header.Set(k, v)
	}
	// W3C traceparent (and tracestate) when the call runs under a trace (tracing's call hook),
	// so that the server's own spans join the request's; none otherwise.
	if trace.SpanContextFromContext(ctx).IsValid() {
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	}

	// The connection, to read the kernel's receive timestamps from (package netstamp), and the
	// moment the request was written to it: the send time, which leaves out the client's own
	// delays before the bytes left (connection pool, the transport's writer goroutine).
	// The request's state also tells a dial started for it that it got a connection (conns).
	rs := &reqState{}
	req = req.WithContext(httptrace.WithClientTrace(context.WithValue(ctx, reqKey{}, rs), &httptrace.ClientTrace{
		GetConn: func(string) { rs.got.Store(false) }, // again when the transport retries
		GotConn: func(i httptrace.GotConnInfo) {
			rs.conn, rs.gotAt = i.Conn, time.Now()
			s.conns.gotConn(rs)
		},
		WroteRequest: func(httptrace.WroteRequestInfo) { rs.wrote.Store(time.Now().UnixNano()) },
	}))
	s.conns.begin()
	defer s.conns.end()

	o := subject.Observation{Scheduled: r.Scheduled, InputTokens: p.InputTokens}
	o.Start = time.Now()
	resp, err := s.client.Do(req)
	if ns := rs.wrote.Load(); ns != 0 {
		o.Start = time.Unix(0, ns)
		if !rs.gotAt.IsZero() {
			// From having a connection to the request's last byte written: the transport's
			// writer goroutine waiting for a CPU shows here.
			setValue(&o, load.ValueSendDelay, msOf(o.Start.Sub(rs.gotAt)))
		}
	}
	if err != nil {
		o.End = time.Now()
		return o, err
	}
	if resp.StatusCode/100 != 2 {
		err := statusError(resp)
		o.End = time.Now()
		closeBody(resp.Body, true)
		return o, err
	}
	if s.stream && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		st, _ := rs.conn.(netstamp.Stamper)
		err = s.readStream(ctx, resp.Body, st, &o, p.OutputTokens)
	} else {
		err = s.readWhole(resp, &o, bp)
	}
	// A stream that ended well is drained to the end of the body, so that its connection serves
	// the next request; one that failed is closed with its connection.
	closeBody(resp.Body, err == nil)
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w (after %v)", ctx.Err(), time.Since(o.Start).Round(time.Millisecond))
	}
	return o, err
}

func (s *Subject) appendBody(b []byte, p workload.Prompt) ([]byte, error) {
	b = append(b, s.head...)
	text, err := json.Marshal(p.Text)
	if err != nil {
		return nil, fmt.Errorf("openai: prompt: %w", err)
	}
	if s.chat {
		b = append(b, `"messages":[`...)
		for _, m := range p.History {
			hist, err := json.Marshal(m.Text)
			if err != nil {
				return nil, fmt.Errorf("openai: prompt: %w", err)
			}
			b = append(b, `{"role":`...)
			b = strconv.AppendQuote(b, m.Role)
			b = append(b, `,"content":`...)
			b = append(b, hist...)
			b = append(b, "},"...)
		}
		b = append(b, `{"role":"user","content":`...)
		if len(p.Images) == 0 {
			b = append(b, text...)
		} else {
			// Content parts: the text, then each image as a data URL (OpenAI's vision input,
			// which vLLM, SGLang, TGI and llama.cpp take too).
			b = append(b, `[{"type":"text","text":`...)
			b = append(b, text...)
			for _, url := range p.Images {
				b = append(b, `},{"type":"image_url","image_url":{"url":`...)
				b = strconv.AppendQuote(b, url)
				b = append(b, '}')
			}
			b = append(b, "}]"...)
		}
		b = append(b, "}]"...)
	} else {
		if len(p.History) > 0 {
			// A completion has no turns: the conversation so far is the start of the prompt.
			var all strings.Builder
			for _, m := range p.History {
				all.WriteString(m.Text)
				all.WriteString("\n\n")
			}
			all.WriteString(p.Text)
			if text, err = json.Marshal(all.String()); err != nil {
				return nil, fmt.Errorf("openai: prompt: %w", err)
			}
		}
		b = append(b, `"prompt":`...)
		b = append(b, text...)
	}
	if p.OutputTokens > 0 {
		b = append(b, `,"max_tokens":`...)
		b = strconv.AppendInt(b, int64(p.OutputTokens), 10)
		if s.cfg.IgnoreEOS {
			b = append(b, `,"min_tokens":`...)
			b = strconv.AppendInt(b, int64(p.OutputTokens), 10)
		}
	}
	return append(b, '}'), nil
}

// chunkInfo is what the subject reads from a streamed chunk or a whole response.
type chunkInfo struct {
	text     []byte // generated text, reasoning included (only when collected)
	textLen  int    // its length in bytes
	finished bool   // a choice has a finish_reason
	errored  bool   // the chunk is an error object
	usageOut int    // usage.completion_tokens, or -1
	usageIn  int    // usage.prompt_tokens, or -1
	timings  *serverTimings
	emit     *emitInfo
}

// EmitField is the field of a stream's last chunk where the mockserver says which content events
// it wrote together: {"first_together": bool, "together": n}, n being the events written in one
// write with the one before them. A client reading two events in one read cannot tell otherwise
// whether the server sent them together or the client read late.
const EmitField = "mock_emit"

// emitInfo is what the server says it wrote together (EmitField).
type emitInfo struct {
	first    bool
	together int
}

// values adds the server's figures to an observation's values, for the load's coalescing
// warning (load.ValueServerFirstTogether).
func (e *emitInfo) values(o *subject.Observation) {
	if e == nil {
		return
	}
	if o.Values == nil {
		o.Values = map[string]float64{}
	}
	first := 0.0
	if e.first {
		first = 1
	}
	o.Values[load.ValueServerFirstTogether] = first
	o.Values[load.ValueServerTogether] = float64(max(e.together, 0))
}

// serverTimings is llama.cpp's per-request "timings" object (its server sends it with the last
// chunk or the whole response): prompt processing and generation as the server timed them.
type serverTimings struct {
	promptMS, predictedMS, predictedPerTokenMS float64
	promptN, predictedN                        int
}

// values adds the server's timings to an observation's values (metrics server_*_ms).
func (t *serverTimings) values(o *subject.Observation) {
	if t == nil {
		return
	}
	if o.Values == nil {
		o.Values = map[string]float64{}
	}
	o.Values["server_prompt_ms"] = t.promptMS
	o.Values["server_predicted_ms"] = t.predictedMS
	if t.predictedN > 0 {
		o.Values["server_predicted_per_token_ms"] = t.predictedPerTokenMS
	}
}

// Note: chunks are parsed with fastjson rather than encoding/json: at 5,000 streamed requests/s
// with 32 events each, encoding/json's reflection took a third of the client's CPU.

// parseChunk reads data; with collect it copies the generated text into info.text.
func parseChunk(p *fastjson.Parser, data []byte, collect bool) (chunkInfo, error) {
	c := chunkInfo{usageOut: -1, usageIn: -1}
	v, err := p.ParseBytes(data)
	if err != nil {
		return c, err
	}
	if v.Type() != fastjson.TypeObject {
		return c, fmt.Errorf("a chunk is a JSON object, not %s", v.Type())
	}
	if e := v.Get("error"); e != nil && e.Type() != fastjson.TypeNull {
		c.errored = true
		return c, nil
	}
	add := func(b []byte) {
		c.textLen += len(b)
		if collect {
			c.text = append(c.text, b...)
		}
	}
	for _, ch := range v.GetArray("choices") {
		for _, key := range [...]string{"delta", "message"} {
			if m := ch.Get(key); m != nil {
				// reasoning_content: vLLM, SGLang, DeepSeek; reasoning: Ollama, OpenRouter.
				for _, f := range [...]string{"reasoning_content", "reasoning", "content"} {
					add(m.GetStringBytes(f))
				}
				// Tool-call deltas are generated tokens too: the function's name, then its
				// arguments, piece by piece (OpenAI, vLLM, SGLang, llama.cpp, Ollama).
				for _, tc := range m.GetArray("tool_calls") {
					add(tc.GetStringBytes("function", "name"))
					add(tc.GetStringBytes("function", "arguments"))
				}
			}
		}
		add(ch.GetStringBytes("text"))
		if len(ch.GetStringBytes("finish_reason")) > 0 {
			c.finished = true
		}
	}
	if u := v.Get("usage"); u != nil && u.Type() == fastjson.TypeObject {
		for i, key := range [...]string{"completion_tokens", "prompt_tokens"} {
			n := u.Get(key)
			if n == nil || n.Type() != fastjson.TypeNumber {
				continue
			}
			v, err := tokenCount(n)
			if err != nil {
				return c, fmt.Errorf("usage.%s = %s: %v", key, n, err)
			}
			if i == 0 {
				c.usageOut = v
			} else {
				c.usageIn = v
			}
		}
	}
	if e := v.Get(EmitField); e != nil && e.Type() == fastjson.TypeObject {
		c.emit = &emitInfo{first: e.GetBool("first_together"), together: e.GetInt("together")}
	}
	if t := v.Get("timings"); t != nil && t.Type() == fastjson.TypeObject {
		c.timings = &serverTimings{
			promptMS: t.GetFloat64("prompt_ms"), predictedMS: t.GetFloat64("predicted_ms"),
			predictedPerTokenMS: t.GetFloat64("predicted_per_token_ms"),
			promptN:             t.GetInt("prompt_n"), predictedN: t.GetInt("predicted_n"),
		}
	}
	return c, nil
}

// MaxTokenCount bounds a token count a server reports in usage: more is not a count.
const MaxTokenCount = 1 << 31

// tokenCount reads a usage count: a whole number from 0 to MaxTokenCount, written as an integer
// or as a float with no fraction (2.0). NaN, infinities (1e400), fractions and negative
// numbers are errors, never 0 tokens.
func tokenCount(n *fastjson.Value) (int, error) {
	f, err := n.Float64()
	switch {
	case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		return 0, errors.New("not a finite number")
	case f < 0:
		return 0, errors.New("a token count cannot be negative")
	case f != math.Trunc(f):
		return 0, errors.New("a token count is a whole number")
	case f > MaxTokenCount:
		return 0, fmt.Errorf("above %d, not a token count", MaxTokenCount)
	}
	return int(f), nil
}

// reader holds what reading one response needs; reused through a pool.
type reader struct {
	sc *Scanner
	p  fastjson.Parser
}

// maxEvents bounds the content events of one streamed answer: a server that keeps streaming
// past what was asked for (or forever) fails the request instead of growing its observation.
func maxEvents(maxTokens int) int {
	if maxTokens > 0 {
		return min(4*maxTokens+1024, MaxStreamEvents)
	}
	return MaxStreamEvents
}

// MaxStreamEvents bounds the content events of one streamed answer when the request sets no
// max_tokens; with max_tokens the bound is 4 × max_tokens + 1024.
const MaxStreamEvents = 1 << 20

func (s *Subject) readStream(ctx context.Context, body io.Reader, st netstamp.Stamper, o *subject.Observation, maxTokens int) error {
	limit := maxEvents(maxTokens)
	rd, _ := s.readers.Get().(*reader)
	if rd == nil {
		rd = &reader{sc: NewScanner(body)}
	} else {
		rd.sc.Reset(body)
	}
	defer func() {
		rd.sc.Reset(nil)
		s.readers.Put(rd)
	}()
	sc := rd.sc
	sc.tr.stamp = st
	o.Streamed = true
	var (
		done, finished bool
		usageOut       = -1
		malformed      error
	)
	for sc.Scan() {
		ev := sc.Event()
		if bytes.Equal(ev.Data, []byte("[DONE]")) {
			done = true
			break
		}
		if ev.Type == "error" {
			o.End = ev.At
			return fmt.Errorf("%w: %s", ErrStream, errorMessage(ev.Data))
		}
		c, err := parseChunk(&rd.p, ev.Data, false)
		if err != nil {
			if malformed == nil {
				malformed = fmt.Errorf("%w: event after %d content events: %v", ErrMalformed, len(o.Tokens), err)
			}
			continue
		}
		if c.errored {
			o.End = ev.At
			return fmt.Errorf("%w: %s", ErrStream, errorMessage(ev.Data))
		}
		if c.usageOut >= 0 {
			usageOut = c.usageOut
		}
		if c.usageIn >= 0 {
			o.InputTokens = c.usageIn
		}
		c.timings.values(o)
		c.emit.values(o)
		finished = finished || c.finished
		if c.textLen == 0 {
			continue // role-only, empty or usage-only chunks are not tokens
		}
		if o.FirstToken.IsZero() {
			o.FirstToken = ev.At
		}
		if len(o.Tokens) >= limit {
			o.End = ev.At
			return fmt.Errorf("%w: the stream went on past %d content events (the bound for max_tokens %d)", ErrMalformed, limit, maxTokens)
		}
		o.Tokens = append(o.Tokens, subject.TokenEvent{At: ev.At, Tokens: 1})
		if len(o.Tokens)%1024 == 0 && ctx.Err() != nil {
			break // the timeout: the read error reports it
		}
	}
	o.End = time.Now()
	if ev := sc.Event(); !ev.At.IsZero() {
		o.End = ev.At
	}
	if sc.tr.stamp != nil {
		setValue(o, load.ValueReadDelay, msOf(sc.tr.maxDelay))
	}
	setOutputTokens(o, usageOut)
	switch {
	case sc.Err() != nil:
		return fmt.Errorf("%w: %v", ErrIncomplete, sc.Err())
	case malformed != nil:
		return malformed
	case !done && !finished:
		return ErrIncomplete
	}
	return nil
}

// setValue sets one of an observation's values.
func setValue(o *subject.Observation, name string, v float64) {
	if o.Values == nil {
		o.Values = make(map[string]float64, 4)
	}
	o.Values[name] = v
}

func msOf(d time.Duration) float64 { return float64(d) / 1e6 }

// setOutputTokens takes the usage figure when there is one (spreading it over the content events
// when events carried several tokens), else counts events.
func setOutputTokens(o *subject.Observation, usage int) {
	n := len(o.Tokens)
	if usage < 0 {
		o.OutputTokens, o.TokensCounted = n, true
		return
	}
	o.OutputTokens = usage
	if n == 0 || usage <= n {
		return
	}
	per, extra := usage/n, usage%n
	for i := range o.Tokens {
		o.Tokens[i].Tokens = per
		if i < extra {
			o.Tokens[i].Tokens++
		}
	}
}

// Bounds of the drain of a body after its answer was read (closeBody): what a server sends after
// [DONE] or an error object is at most the chunked terminator and a trailer.
const (
	drainBytes   = 64 << 10
	drainTimeout = time.Second
)

// closeBody closes a response body. With drain it first reads the body to its end, at most
// drainBytes and for at most drainTimeout: Go's transport keeps a connection only when its body
// was read to io.EOF, and a stream read up to [DONE] still has the chunked terminator unread.
// Closing it there dropped the connection (a new one every few requests, with TCP resets when
// the terminator arrived after the close).
func closeBody(body io.ReadCloser, drain bool) {
	if drain {
		t := time.AfterFunc(drainTimeout, func() { body.Close() }) // unblocks the read below
		io.CopyN(io.Discard, body, drainBytes)                     //nolint:errcheck // whatever stops it, the body is closed next
		t.Stop()
	}
	body.Close()
}

// DefaultMaxResponseBytes is the default bound of one whole (not streamed) response body.
const DefaultMaxResponseBytes = 16 << 20

// errBodyLimit is a response body over max_response_bytes.
var errBodyLimit = errors.New("over max_response_bytes")

func (s *Subject) readWhole(resp *http.Response, o *subject.Observation, bp *[]byte) error {
	if resp.ContentLength > int64(s.maxBody) {
		o.End = time.Now()
		return fmt.Errorf("%w: the response body of %d bytes (Content-Length) exceeded max_response_bytes (%d)", ErrTooLarge, resp.ContentLength, s.maxBody)
	}
	br := &budgetReader{r: resp.Body, held: &s.held, max: 16 * int64(s.maxBody)}
	b, err := readall.Into(br, (*bp)[:0], s.maxBody, "response body")
	br.release()
	*bp = b[:0]
	if cap(b) > 1<<20 {
		*bp = nil // the pool keeps no huge buffer
	}
	o.End = time.Now()
	switch {
	case errors.Is(err, errBodyLimit):
		return fmt.Errorf("%w: the response bodies being read at once exceeded max_response_bytes × 16 (%d bytes)", ErrTooLarge, br.max)
	case err != nil && len(b) > s.maxBody:
		return fmt.Errorf("%w: the response body exceeded max_response_bytes (%d)", ErrTooLarge, s.maxBody)
	case err != nil:
		return fmt.Errorf("%w: %v", ErrIncomplete, err)
	}
	var p fastjson.Parser
	c, err := parseChunk(&p, b, true)
	if err != nil {
		return fmt.Errorf("%w: response body: %v", ErrMalformed, err)
	}
	if c.errored {
		return fmt.Errorf("%w: %s", ErrStream, errorMessage(b))
	}
	if c.usageIn >= 0 {
		o.InputTokens = c.usageIn
	}
	c.timings.values(o)
	if c.usageOut >= 0 {
		o.OutputTokens = c.usageOut
		return nil
	}
	o.OutputTokens, o.TokensCounted = workload.CountWords(string(c.text)), true
	return nil
}

// budgetReader counts the bytes it reads against a budget shared by every request of a Subject,
// so the whole bodies being read at once stay bounded however many requests are in flight.
type budgetReader struct {
	r    io.Reader
	held *atomic.Int64
	n    int64
	max  int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.n += int64(n)
		if b.held.Add(int64(n)) > b.max {
			return n, errBodyLimit
		}
	}
	return n, err
}

// release gives back what the reader counted.
func (b *budgetReader) release() { b.held.Add(-b.n); b.n = 0 }

// statusError reads the server's message from an error answer.
func statusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return &StatusError{Code: resp.StatusCode, Message: errorMessage(b)}
}

// errorMessage finds the message in an OpenAI-style error body ({"error": {"message": ...}},
// {"error": "..."}, {"message": ...}, {"detail": ...}), or returns the text itself, shortened.
func errorMessage(b []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(b, &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var str string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case json.Unmarshal(v.Error, &str) == nil && str != "":
			return str
		case v.Message != "":
			return v.Message
		case v.Detail != nil:
			return fmt.Sprint(v.Detail)
		}
	}
	msg := strings.TrimSpace(string(b))
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return msg
}
