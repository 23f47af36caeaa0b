package openai

import (
	"context"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/subject"
)

var updateStreams = flag.Bool("update-streams", false, "rewrite testdata/streams/*.sse from the fixtures")

// streamFixture is a response stream as one server writes it, byte for byte, from that server's
// documented format (its API reference or OpenAI-compatibility notes). Each element of writes is
// one write of the server, flushed: several events in one write, one event split over writes.
type streamFixture struct {
	name      string
	endpoint  string // chat (default) or completions
	writes    []string
	events    int    // content events the client must count as tokens
	output    int    // output tokens (from usage, or counted)
	input     int    // prompt tokens from usage, or 0 when the server sends none
	counted   bool   // no usage: tokens are counted events
	errKind   string // the error kind, when the stream reports an error
	firstText int    // which write holds the first content event (TTFT)
	timings   bool   // llama.cpp's timings object is read
}

func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("data: ")
		b.WriteString(e)
		b.WriteString("\n\n")
	}
	return b.String()
}

func streamFixtures() []streamFixture {
	const vid = `"id":"chatcmpl-7f3","object":"chat.completion.chunk","created":1732000000,"model":"m"`
	vchunk := func(delta, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `{` + vid + `,"choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + f + `}]}`
	}
	const oid = `"id":"chatcmpl-AbC","object":"chat.completion.chunk","created":1732000000,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_0aa8d3e20b"`
	ochunk := func(delta, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `{` + oid + `,"choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + f + `}],"usage":null,"obfuscation":"x7Qk"}`
	}
	const lid = `"created":1732000000,"id":"chatcmpl-Kx2","model":"tiny","system_fingerprint":"b6000-abc","object":"chat.completion.chunk"`
	const timings = `"timings":{"cache_n":0,"prompt_n":9,"prompt_ms":3.1,"prompt_per_token_ms":0.34,"prompt_per_second":2903.2,"predicted_n":4,"predicted_ms":2.4,"predicted_per_token_ms":0.6,"predicted_per_second":1666.7}`
	return []streamFixture{
		{
			// vLLM: a role-only first chunk with empty content, one event per write, the last
			// choice chunk with empty content and finish_reason, then a usage-only chunk
			// (choices []) for stream_options.include_usage.
			name: "vllm_chat",
			writes: []string{
				sse(vchunk(`{"role":"assistant","content":""}`, "")),
				sse(vchunk(`{"content":"Hel"}`, "")),
				sse(vchunk(`{"content":"lo"}`, "")),
				sse(vchunk(`{"content":" wor"}`, "")),
				sse(vchunk(`{"content":"ld"}`, "")),
				sse(vchunk(`{"content":""}`, "length")),
				sse(`{`+vid+`,"choices":[],"usage":{"prompt_tokens":5,"total_tokens":9,"completion_tokens":4}}`, "[DONE]"),
			},
			events: 4, output: 4, input: 5, firstText: 1,
		},
		{
			// vLLM with a reasoning parser: reasoning_content deltas (newer vLLM names the
			// field reasoning), then content; usage reports more tokens than events.
			name: "vllm_reasoning",
			writes: []string{
				sse(vchunk(`{"role":"assistant","content":""}`, "")),
				sse(vchunk(`{"reasoning_content":"Let me"}`, "")),
				sse(vchunk(`{"reasoning":" think."}`, "")),
				sse(vchunk(`{"content":"Yes"}`, "")),
				sse(vchunk(`{"content":""}`, "stop")),
				sse(`{`+vid+`,"choices":[],"usage":{"prompt_tokens":12,"total_tokens":18,"completion_tokens":6}}`, "[DONE]"),
			},
			events: 3, output: 6, input: 12, firstText: 1,
		},
		{
			// SGLang: "usage":null and "reasoning_content":null in every chunk, matched_stop,
			// several events in one write, usage chunk after the finish.
			name: "sglang_chat",
			writes: []string{
				sse(`{"id":"a1","object":"chat.completion.chunk","created":1732000000,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`,
					`{"id":"a1","object":"chat.completion.chunk","created":1732000000,"model":"m","choices":[{"index":0,"delta":{"role":null,"content":"One","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`),
				sse(`{"id":"a1","object":"chat.completion.chunk","created":1732000000,"model":"m","choices":[{"index":0,"delta":{"role":null,"content":" two","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`,
					`{"id":"a1","object":"chat.completion.chunk","created":1732000000,"model":"m","choices":[{"index":0,"delta":{"role":null,"content":" three","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`),
				sse(`{"id":"a1","object":"chat.completion.chunk","created":1732000000,"model":"m","choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"stop","matched_stop":2}],"usage":null}`,
					`{"id":"a1","object":"chat.completion.chunk","created":1732000000,"model":"m","choices":[],"usage":{"prompt_tokens":7,"total_tokens":10,"completion_tokens":3,"prompt_tokens_details":null}}`,
					"[DONE]"),
			},
			events: 3, output: 3, input: 7, firstText: 0,
		},
		{
			// TGI's OpenAI route (Messages API): no role-only chunk (every chunk has the role),
			// keep-alive comments, an event split across two writes.
			name: "tgi_chat",
			writes: []string{
				":\n\n",
				sse(`{"object":"chat.completion.chunk","id":"","created":1732000000,"model":"tgi","system_fingerprint":"3.0.1-native","choices":[{"index":0,"delta":{"role":"assistant","content":"The"},"logprobs":null,"finish_reason":null}],"usage":null}`),
				`data: {"object":"chat.completion.chunk","id":"","created":1732000000,"model":"tgi","system_fingerprint":"3.0.1-native","choices":[{"index":0,"delta":{"role":"assis`,
				`tant","content":" sky"},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n",
				":\n\n",
				sse(`{"object":"chat.completion.chunk","id":"","created":1732000000,"model":"tgi","system_fingerprint":"3.0.1-native","choices":[{"index":0,"delta":{"role":"assistant","content":" is"},"logprobs":null,"finish_reason":"length"}],"usage":null}`,
					`{"object":"chat.completion.chunk","id":"","created":1732000000,"model":"tgi","system_fingerprint":"3.0.1-native","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":3,"total_tokens":7}}`,
					"[DONE]"),
			},
			events: 3, output: 3, input: 4, firstText: 1,
		},
		{
			// TGI: an error during generation, as an error event.
			name: "tgi_error",
			writes: []string{
				sse(`{"object":"chat.completion.chunk","id":"","created":1732000000,"model":"tgi","system_fingerprint":"3.0.1-native","choices":[{"index":0,"delta":{"role":"assistant","content":"A"},"logprobs":null,"finish_reason":null}],"usage":null}`),
				"event: error\ndata: {\"error\":\"Request failed during generation: Server error: CUDA out of memory\",\"error_type\":\"generation\"}\n\n",
			},
			events: 1, output: 1, counted: true, errKind: "stream_error", firstText: 0,
		},
		{
			// llama.cpp's server: the role chunk has content null, the last chunk an empty
			// delta with finish_reason, usage and the server's own timings.
			name: "llamacpp_chat",
			writes: []string{
				sse(`{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],` + lid + `}`),
				sse(`{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"we"}}],` + lid + `}`),
				sse(`{"choices":[{"finish_reason":null,"index":0,"delta":{"content":" with"}}],` + lid + `}`),
				sse(`{"choices":[{"finish_reason":null,"index":0,"delta":{"content":" is"}}],` + lid + `}`),
				sse(`{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"\n"}}],` + lid + `}`),
				sse(`{"choices":[{"finish_reason":"length","index":0,"delta":{}}],`+lid+`,"usage":{"completion_tokens":4,"prompt_tokens":9,"total_tokens":13},`+timings+`}`, "[DONE]"),
			},
			events: 4, output: 4, input: 9, firstText: 1, timings: true,
		},
		{
			// llama.cpp's /v1/completions.
			name:     "llamacpp_completions",
			endpoint: "completions",
			writes: []string{
				sse(`{"choices":[{"text":"hot","index":0,"logprobs":null,"finish_reason":null}],"created":1732000000,"model":"tiny","system_fingerprint":"b6000-abc","object":"text_completion","id":"chatcmpl-Q1"}`),
				sse(`{"choices":[{"text":" hot","index":0,"logprobs":null,"finish_reason":null}],"created":1732000000,"model":"tiny","system_fingerprint":"b6000-abc","object":"text_completion","id":"chatcmpl-Q1"}`),
				sse(`{"choices":[{"text":"","index":0,"logprobs":null,"finish_reason":"length"}],"created":1732000000,"model":"tiny","system_fingerprint":"b6000-abc","object":"text_completion","id":"chatcmpl-Q1","usage":{"completion_tokens":2,"prompt_tokens":9,"total_tokens":11},`+timings+`}`, "[DONE]"),
			},
			events: 2, output: 2, input: 9, firstText: 0, timings: true,
		},
		{
			// llama-cpp-python's server (sse-starlette): CRLF line endings and ": ping" comments.
			name: "llamacpp_python_chat",
			writes: []string{
				"data: " + `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732000000,"model":"tiny.gguf","choices":[{"index":0,"delta":{"role":"assistant"},"logprobs":null,"finish_reason":null}]}` + "\r\n\r\n",
				": ping - 2026-11-22 18:00:00.000000+00:00\r\n\r\n",
				"data: " + `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732000000,"model":"tiny.gguf","choices":[{"index":0,"delta":{"content":"a"},"logprobs":null,"finish_reason":null}]}` + "\r\n\r\n" +
					"data: " + `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732000000,"model":"tiny.gguf","choices":[{"index":0,"delta":{"content":"b"},"logprobs":null,"finish_reason":null}]}` + "\r\n\r\n",
				"data: " + `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732000000,"model":"tiny.gguf","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}]}` + "\r\n\r\n",
				"data: [DONE]\r\n\r\n",
			},
			events: 2, output: 2, counted: true, firstText: 2,
		},
		{
			// Ollama's OpenAI compatibility: the role in every chunk, "reasoning" of thinking
			// models, a final chunk with empty content, a usage chunk.
			name: "ollama_chat",
			writes: []string{
				sse(`{"id":"chatcmpl-412","object":"chat.completion.chunk","created":1732000000,"model":"qwen3:0.6b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Hmm"},"finish_reason":null}]}`),
				sse(`{"id":"chatcmpl-412","object":"chat.completion.chunk","created":1732000000,"model":"qwen3:0.6b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`),
				sse(`{"id":"chatcmpl-412","object":"chat.completion.chunk","created":1732000000,"model":"qwen3:0.6b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"!"},"finish_reason":null}]}`),
				sse(`{"id":"chatcmpl-412","object":"chat.completion.chunk","created":1732000000,"model":"qwen3:0.6b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}`),
				sse(`{"id":"chatcmpl-412","object":"chat.completion.chunk","created":1732000000,"model":"qwen3:0.6b","system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":3,"total_tokens":14}}`, "[DONE]"),
			},
			events: 3, output: 3, input: 11, firstText: 0,
		},
		{
			// The OpenAI API: refusal null, usage null and obfuscation in every chunk, an
			// empty final delta, a usage chunk with token details.
			name: "openai_chat",
			writes: []string{
				sse(ochunk(`{"role":"assistant","content":"","refusal":null}`, "")),
				sse(ochunk(`{"content":"Hello"}`, "")),
				sse(ochunk(`{"content":"!"}`, "")),
				sse(ochunk(`{}`, "stop")),
				sse(`{`+oid+`,"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"obfuscation":"Qq"}`, "[DONE]"),
			},
			events: 2, output: 2, input: 8, firstText: 1,
		},
		{
			// The OpenAI API calling a tool: no content at all; the function's name and its
			// arguments arrive as tool_calls deltas, and they are the generated tokens.
			name: "openai_tool_calls",
			writes: []string{
				sse(ochunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_Zx1","type":"function","function":{"name":"get_weather","arguments":""}}],"refusal":null}`, "")),
				sse(ochunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]}`, "")),
				sse(ochunk(`{"tool_calls":[{"index":0,"function":{"arguments":"city"}}]}`, "")),
				sse(ochunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\":\""}}]}`, "")),
				sse(ochunk(`{"tool_calls":[{"index":0,"function":{"arguments":"Paris"}}]}`, "")),
				sse(ochunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]}`, "")),
				sse(ochunk(`{}`, "tool_calls")),
				sse(`{`+oid+`,"choices":[],"usage":{"prompt_tokens":60,"completion_tokens":15,"total_tokens":75}}`, "[DONE]"),
			},
			events: 6, output: 15, input: 60, firstText: 0,
		},
		{
			// vLLM: an error object in the stream after some content (e.g. the request was
			// aborted by the engine).
			name: "vllm_error",
			writes: []string{
				sse(vchunk(`{"role":"assistant","content":""}`, "")),
				sse(vchunk(`{"content":"Par"}`, "")),
				sse(`{"error":{"object":"error","message":"The engine was aborted","type":"InternalServerError","param":null,"code":500}}`),
			},
			events: 1, output: 1, counted: true, errKind: "stream_error", firstText: 1,
		},
	}
}

// TestStreamFixtures replays each server's stream through a real HTTP connection, write by write,
// and checks what the client counts: token events (role-only, empty, null and usage-only chunks
// are not tokens; reasoning and tool-call deltas are), output and prompt tokens from usage, the
// first token at the first content event, errors by kind, llama.cpp's timings. The streams are
// kept byte for byte under testdata/streams (go test -run TestStreamFixtures -update-streams).
func TestStreamFixtures(t *testing.T) {
	for _, fx := range streamFixtures() {
		t.Run(fx.name, func(t *testing.T) {
			golden := filepath.Join("testdata", "streams", fx.name+".sse")
			whole := strings.Join(fx.writes, "")
			if *updateStreams {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(whole), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if b, err := os.ReadFile(golden); err != nil || string(b) != whole {
				t.Fatalf("%s differs from the fixture (run with -update-streams): %v", golden, err)
			}
			wrote := make([]time.Time, len(fx.writes))
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				fl := w.(http.Flusher)
				for i, chunk := range fx.writes {
					if i > 0 {
						time.Sleep(2 * time.Millisecond) // writes arrive apart, as a server's do
					}
					wrote[i] = time.Now()
					w.Write([]byte(chunk))
					fl.Flush()
				}
			}))
			s := open(t, Config{URL: srv.URL + "/v1", Endpoint: fx.endpoint})
			o, err := s.Do(context.Background(), subject.Request{Index: 0})
			srv.Close() // waits for the handler: wrote is complete
			if fx.errKind != "" {
				var e *Error
				if !errors.As(err, &e) || e.Kind() != fx.errKind {
					t.Fatalf("err = %v, want kind %s", err, fx.errKind)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if len(o.Tokens) != fx.events {
				t.Errorf("token events = %d, want %d", len(o.Tokens), fx.events)
			}
			if fx.errKind == "" {
				if o.OutputTokens != fx.output || o.TokensCounted != fx.counted {
					t.Errorf("output tokens = %d (counted %v), want %d (counted %v)", o.OutputTokens, o.TokensCounted, fx.output, fx.counted)
				}
				sum := 0
				for _, ev := range o.Tokens {
					sum += ev.Tokens
				}
				if sum != fx.output {
					t.Errorf("tokens over the events sum to %d, want %d", sum, fx.output)
				}
			}
			if fx.input > 0 && o.InputTokens != fx.input {
				t.Errorf("input tokens = %d, want %d", o.InputTokens, fx.input)
			}
			if fx.events > 0 {
				// The first token is the first content event, which came with write firstText:
				// it cannot have been seen before that write (a TTFT taken at a role-only or
				// empty chunk would be).
				if !o.FirstToken.Equal(o.Tokens[0].At) {
					t.Errorf("first token at %v, first content event at %v", o.FirstToken, o.Tokens[0].At)
				}
				if o.FirstToken.Before(wrote[fx.firstText]) {
					t.Errorf("first token at %v, before write %d at %v", o.FirstToken, fx.firstText, wrote[fx.firstText])
				}
			}
			if fx.timings {
				want := map[string]float64{"server_prompt_ms": 3.1, "server_predicted_ms": 2.4, "server_predicted_per_token_ms": 0.6}
				for k, v := range want {
					if o.Values[k] != v {
						t.Errorf("%s = %v, want %v", k, o.Values[k], v)
					}
				}
			} else if _, ok := o.Values["server_prompt_ms"]; ok {
				t.Errorf("server_prompt_ms set without timings in the stream")
			}
		})
	}
}
