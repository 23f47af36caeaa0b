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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

func init() {
	result.Define(
		result.Info{Name: "server_prompt_ms", Unit: "ms", Better: result.Lower, Doc: "llama.cpp: the server's own prompt-processing time of a request (timings.prompt_ms)"},
		result.Info{Name: "server_predicted_ms", Unit: "ms", Better: result.Lower, Doc: "llama.cpp: the server's own generation time of a request (timings.predicted_ms)"},
		result.Info{Name: "server_predicted_per_token_ms", Unit: "ms", Better: result.Lower, Doc: "llama.cpp: the server's generation time per generated token (timings.predicted_per_token_ms)"},
		result.Info{Name: figures.ValueSendDelay, Unit: "ms", Better: result.Lower, Doc: "the client's delay from having a connection to the request's last byte written"},
		result.Info{Name: figures.ValueReadDelay, Unit: "ms", Better: result.Lower, Doc: "the client's longest delay in a request from the kernel receiving response bytes to reading them"},
	)
	subject.Register(subject.Kind{
		Name:   "openai",
		Config: func() any { return &Config{} },
		Open: func(ctx context.Context, s subject.Spec) (subject.Subject, error) {
			cfg, _ := s.Config.(*Config)
			if cfg == nil {
				return nil, fmt.Errorf("openai: benchmark %s: subject needs url and model", s.Benchmark)
			}
			c := *cfg
			c.runTimeout = s.Timeout
			return Open(ctx, c, s.Params, s.Dir)
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
	// IgnoreEOS asks the server for exactly max_tokens tokens: ignore_eos (vLLM, SGLang,
	// llama.cpp) and min_tokens at max_tokens (vLLM). Unset, the subject asks where the server
	// takes them (exactLengths): a server known by its /v1/models owned_by, or one that answers a
	// one-token request with them. false never asks; true always does.
	IgnoreEOS *bool `yaml:"ignore_eos" json:"ignore_eos,omitempty"`
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

	// runTimeout is the run's deadline of one call (subject.Spec.Timeout): with Timeout, the
	// deadline of the requests Open sends (probeDeadline).
	runTimeout time.Duration
}

// Subject sends one request per Do. It is safe for concurrent use.
type Subject struct {
	cfg          Config
	endpoint     string // full URL of the endpoint
	chat         bool
	stream       bool
	includeUsage bool
	ignoreEOS    bool   // requests send ignore_eos
	minTokens    bool   // requests send min_tokens at max_tokens
	exact        string // how output lengths are asked for, and why (Describe's exact_output)
	auth         string // "Bearer <key>", or empty
	head         []byte // the request body up to the prompt
	client       *http.Client
	conns        *conns
	src          *workload.Source
	bufs         sync.Pool     // *[]byte: request and response bodies
	readers      sync.Pool     // *reader
	maxBody      int           // bound of one whole response body
	held         atomic.Int64  // bytes of whole response bodies being read, by all requests
	probeWait    time.Duration // the deadline of each request Open sends
	probeFrom    string        // what set probeWait, for its errors
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
	if cfg.Timeout < 0 || cfg.runTimeout < 0 {
		return nil, errors.New("openai: timeout must not be negative")
	}
	if cfg.Timeout == 0 {
		s.cfg.Timeout = 10 * time.Minute
	}
	s.probeWait, s.probeFrom = probeDeadline(cfg)
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
	// 1 KiB: a streamed request holds its buffer for the request body only (a few hundred bytes
	// at 32 prompt tokens), and a buffer that grew comes back to the pool grown; at 8 KiB the
	// buffers of 512 streams were 4 MB of the heap that a collection waits for.
	s.bufs.New = func() any { b := make([]byte, 0, 1<<10); return &b }

	idle := max(cfg.MaxConnections, p.Int("concurrency", 0), p.Int("max_concurrency", 0), 1024)
	s.setClient(cfg.MaxConnections, idle)
	if err := s.reachable(ctx, base); err != nil {
		return nil, err
	}
	if err := s.exactLengths(ctx, base); err != nil {
		return nil, err
	}
	return s, nil
}

// setClient makes the subject's HTTP client: at most maxConns connections to the server (0:
// no limit), idle of them kept, through conns, which counts the connections it dials; no
// compression, and no timeout on the response's headers (a long prefill is not an error).
func (s *Subject) setClient(maxConns, idle int) {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	s.conns = newConns(dialer)
	s.client = &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           s.conns.DialContext,
		MaxIdleConns:          idle,
		MaxIdleConnsPerHost:   idle,
		MaxConnsPerHost:       maxConns,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 0, // a long prefill is not an error; Timeout bounds the request
		DisableCompression:    true,
		ForceAttemptHTTP2:     true,
	}, CheckRedirect: checkRedirect}
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
	ctx, cancel := context.WithTimeout(ctx, min(5*time.Second, s.probeWait))
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

// defaultProbeTimeout bounds each request Open sends when neither the run nor the subject gives
// a timeout.
const defaultProbeTimeout = 30 * time.Second

// probeDeadline is the deadline of each request Open sends (GET /models, the one-token request of
// exactLengths) and what set it: the run's timeout of a call or the subject's own, the shorter
// where both are given, else defaultProbeTimeout. A stalled server then fails the open in about
// the run's timeout, not in a fixed time of the probes' own.
func probeDeadline(cfg Config) (time.Duration, string) {
	switch {
	case cfg.runTimeout > 0 && (cfg.Timeout <= 0 || cfg.runTimeout <= cfg.Timeout):
		return cfg.runTimeout, "the run's timeout (--timeout, load.timeout)"
	case cfg.Timeout > 0:
		return cfg.Timeout, "the subject's timeout"
	}
	return defaultProbeTimeout, "the probes' default without a timeout (--timeout sets it)"
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
	if s.ignoreEOS {
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
	return map[string]any{"url": s.cfg.URL, "model": s.cfg.Model, "endpoint": s.endpoint, "stream": s.stream, "exact_output": s.exact,
		// How token counts were made, as each figure is stated.
		"token_counts": "input: the server's usage.prompt_tokens where it reports it, else " + s.src.Counted() +
			"; output: usage.completion_tokens, else content events (the output_tokens note says so)",
		// Whether a server's prefix cache may hold them from an earlier run (the certificate's prefix_cache).
		"prompts": s.src.Prompts(), "prompts_share": s.src.Shares()}
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
