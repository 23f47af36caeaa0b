package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/netstamp"
	"github.com/inferbench/inferbench/internal/base/unit"
	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/subject"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// do sends one request (its body from the workload's prompt, see appendBody) and observes its
// answer: streamed (readStream) or whole (readWhole).
func (s *Subject) do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	p := s.src.Prompt(r.Index)
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	body, err := s.appendBody((*bp)[:0], p)
	*bp = body[:0]
	if err != nil {
		return subject.Observation{}, err
	}
	ctx, cancel := withTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	// The connection, to read the kernel's receive timestamps from (package netstamp), and the
	// moment the request was written to it: the send time, which leaves out the client's own
	// delays before the bytes left (connection pool, the transport's writer goroutine).
	// The request's state also tells a dial started for it that it got a connection (conns).
	rs := &reqState{}
	rs.trace = httptrace.ClientTrace{
		GetConn: func(string) { rs.got.Store(false) }, // again when the transport retries
		GotConn: func(i httptrace.GotConnInfo) {
			rs.conn, rs.gotAt = i.Conn, time.Now()
			s.conns.gotConn(rs)
		},
		WroteRequest: func(httptrace.WroteRequestInfo) { rs.wrote.Store(time.Now().UnixNano()) },
	}
	// The request is made with its final context: WithContext would copy it.
	rctx := httptrace.WithClientTrace(context.WithValue(ctx, reqKey{}, rs), &rs.trace)
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return subject.Observation{}, err
	}
	// Fixed values are shared slices (a Header.Set allocates one per call); no one appends to a
	// header of a sent request, and their capacity is their length, so an append would copy.
	req.Header["Content-Type"] = headerJSON
	// Servers close idle keep-alive connections (llama.cpp's after 5 s or 5 requests); a request
	// sent on one as it closes fails with nothing answered. Go resends such a request on a new
	// connection only when it is marked replayable, which an idempotency key does (the send time
	// is then the resend's: WroteRequest below).
	req.Header["X-Idempotency-Key"] = []string{idempotencyKey(r.Index)}
	if s.stream {
		req.Header["Accept"] = headerSSE
	}
	s.headers(req)
	// W3C traceparent (and tracestate) when the call runs under a trace (tracing's call hook),
	// so that the server's own spans join the request's; none otherwise.
	if trace.SpanContextFromContext(ctx).IsValid() {
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	}
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
			setValue(&o, figures.ValueSendDelay, unit.MS(o.Start.Sub(rs.gotAt)))
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
	ended := false // the body was read to its end
	if s.stream && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		st, _ := rs.conn.(netstamp.Stamper)
		ended, err = s.readStream(ctx, resp.Body, st, &o, p.OutputTokens)
	} else {
		err = s.readWhole(resp, &o, bp)
	}
	// A stream that ended well is drained to the end of the body (unless it was read to it
	// already), so that its connection serves the next request; one that failed is closed with
	// its connection.
	closeBody(resp.Body, err == nil && !ended)
	if err == nil && p.OutputTokens > 0 && o.OutputTokens > 0 {
		// Whether the server stopped before the length asked (the serving load counts them).
		short := 0.0
		if o.OutputTokens < p.OutputTokens {
			short = 1
		}
		setValue(&o, figures.ValueOutputShort, short)
	}
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w (after %v)", ctx.Err(), time.Since(o.Start).Round(time.Millisecond))
	}
	return o, err
}

// Header values every request sends, shared (do).
var (
	headerJSON = []string{"application/json"}
	headerSSE  = []string{"text/event-stream"}
)

// withTimeout bounds ctx by d, unless ctx ends sooner already (a load driver's timeout of a call,
// 5 minutes by default, against the subject's 10): then it is ctx, and cancel does nothing, which
// saves the four allocations of a context with a deadline of its own.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if end, ok := ctx.Deadline(); ok && time.Until(end) <= d {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
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
		if s.minTokens {
			b = append(b, `,"min_tokens":`...)
			b = strconv.AppendInt(b, int64(p.OutputTokens), 10)
		}
	}
	return append(b, '}'), nil
}
