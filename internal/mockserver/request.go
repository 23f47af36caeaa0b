// This file holds a completion request's handling: reading and checking the request, counting its
// prompt, answering errors, and handing the drawn plan to the streamed or whole response.

package mockserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/inferbench/inferbench/internal/base/netstamp"
	"github.com/inferbench/inferbench/internal/base/readall"
	"github.com/inferbench/inferbench/internal/workload"
)

// request is the part of a completion request the server reads.
type request struct {
	Model               string            `json:"model"`
	Messages            []json.RawMessage `json:"messages"`
	Prompt              json.RawMessage   `json:"prompt"`
	Stream              bool              `json:"stream"`
	MaxTokens           *int              `json:"max_tokens"`
	MaxCompletionTokens *int              `json:"max_completion_tokens"`
	IgnoreEOS           bool              `json:"ignore_eos"`
	MinTokens           int               `json:"min_tokens"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
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
	if s.cfg.RefuseExact && (req.IgnoreEOS || req.MinTokens > 0) {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "Unrecognized request argument supplied: ignore_eos, min_tokens")
		return
	}
	if s.cache != nil {
		s.cache.lookup(promptWords(chat, req))
	}
	p := s.draw(seq, maxTokens, req.IgnoreEOS || (maxTokens > 0 && req.MinTokens >= maxTokens))
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
	if s.engine != nil {
		p.ttft, p.gaps = 0, nil
		p.batch = s.engine.join(received, p.events)
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
