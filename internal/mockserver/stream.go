// This file holds the response writers: the server-sent event stream on its schedule (with the
// llama.cpp timings and the emit field), the whole JSON answer, and the byte formatting both share.

package mockserver

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/inferbench/inferbench/internal/base/unit"
	"github.com/inferbench/inferbench/internal/workload"
)

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
	sw := &eventWriter{s: s, w: w, fl: fl, sh: sh, head: s.chunkHead(chat, e.ID), p: p, e: e,
		nullUsage:  sh.alwaysUsage || (sh.usageNull && includeUsage),
		usageChunk: includeUsage && !sh.usageInLast,
		buf:        (*bp)[:0]}
	defer func() { *bp = sw.buf[:0] }()
	defer sw.stopTimer()
	sw.flush() // the headers: a stream sends nothing more before its first token

	var last time.Time // when the event before was flushed
	due := e.Received.Add(p.ttft)
	for k := range p.events {
		at, ok := sw.eventAt(ctx, k, &due, last)
		if !ok || !sw.waitUntil(ctx, at) || sw.fault(k) {
			return
		}
		sw.writeContent(k)
		if k < p.events-1 && (p.batch != nil || p.gaps != nil && p.gaps[k] > 0) {
			sw.flush() // a gap follows: this event goes out alone, whenever the next is due
			last = time.Now()
		}
	}
	sw.end()
}

// eventWriter writes one stream's events: the chunks in its buffer, what went out together, and
// the timer it waits on.
type eventWriter struct {
	s    *Server
	w    http.ResponseWriter
	fl   http.Flusher
	sh   shape
	head []byte
	p    *plan
	e    *Emission
	// nullUsage says chunks carry "usage":null; usageChunk, that a chunk of usage alone ends
	// the stream.
	nullUsage, usageChunk bool
	buf                   []byte
	// What went out together: content events written since the last flush (pending), events
	// written in one flush with the one before them (together), and whether the first two were.
	pending, together int
	first, flushed    bool
	timer             *time.Timer
}

// flush flushes what was written and stamps the content events it carried.
func (sw *eventWriter) flush() {
	if sw.fl != nil {
		sw.fl.Flush()
	}
	if sw.pending > 0 {
		e := sw.e
		now := time.Now()
		if e.FirstToken.IsZero() {
			e.FirstToken = now
		}
		if e.Events != nil {
			for range sw.pending {
				e.Events = append(e.Events, now)
			}
		}
		if !sw.flushed {
			sw.first, sw.flushed = sw.pending > 1, true
		}
		sw.together += sw.pending - 1
		sw.pending = 0
	}
}

// send writes the buffer out and empties it.
func (sw *eventWriter) send() {
	sw.w.Write(sw.buf) //nolint:errcheck // a gone client shows as ctx done
	sw.buf = sw.buf[:0]
}

// stopTimer stops the timer of the waits, if one was made.
func (sw *eventWriter) stopTimer() {
	if sw.timer != nil {
		sw.timer.Stop()
	}
}

// closeChunk ends a chunk: usage (the figure or null), llama.cpp's timings, the shape's extra
// fields, and in the last chunk before [DONE] what the server wrote together (EmitField).
func (sw *eventWriter) closeChunk(b []byte, usage, last bool) []byte {
	s, e, p := sw.s, sw.e, sw.p
	switch {
	case usage:
		b = append(b, `,"usage":`...)
		b = appendUsage(b, e.InputTokens, s.usageOut(p.tokens))
	case sw.nullUsage:
		b = append(b, `,"usage":null`...)
	}
	if last && sw.sh.timings {
		b = s.appendTimings(b, e, p.tokens)
	}
	b = append(b, sw.sh.extra...)
	if last {
		tog, fst := sw.together+max(sw.pending-1, 0), sw.first
		if !sw.flushed {
			fst = sw.pending > 1
		}
		b = append(b, `,"`+EmitField+`":{"first_together":`...)
		b = strconv.AppendBool(b, fst)
		b = append(b, `,"together":`...)
		b = strconv.AppendInt(b, int64(tog), 10)
		b = append(b, '}')
	}
	return append(b, "}\n\n"...)
}

// eventAt returns when event k goes out and moves due, the schedule's time for it, on: from
// the batcher when the plan has one, by the plan's gaps, and later by the stall at its event.
// It returns false when ctx ended while it waited for the batcher.
func (sw *eventWriter) eventAt(ctx context.Context, k int, due *time.Time, last time.Time) (time.Time, bool) {
	p, e := sw.p, sw.e
	at := *due
	if p.batch != nil {
		select {
		case at = <-p.batch:
			*due = at
			if k == 0 {
				e.FirstDue = at
			}
			e.EndDue = at
		case <-ctx.Done():
			return at, false
		}
	}
	if k > 0 && p.gaps != nil {
		gap := p.gaps[k-1]
		*due = due.Add(gap)
		at = *due
		// A late event is followed by the next at least half its gap later, and each is
		// flushed on its own (in stream): the schedule catches up, but a client does not read
		// two events of a gap as one (a gap of zero in itl_ms). A timer ends late by up to
		// a millisecond (the runtime's netpoller waits in whole milliseconds), so at a 1 ms
		// gap a stream written by the schedule alone sent pairs together.
		if soonest := last.Add(gap / 2); gap > 0 && soonest.After(at) {
			at = soonest
		}
	}
	if k == p.stallAt {
		*due = due.Add(sw.s.cfg.Stall)
		at = at.Add(sw.s.cfg.Stall)
	}
	return at, true
}

// waitUntil flushes what was written and waits for at, if it is still to come; it returns false
// when ctx ended first.
func (sw *eventWriter) waitUntil(ctx context.Context, at time.Time) bool {
	wait := time.Until(at)
	if wait <= 0 {
		return true
	}
	sw.flush()
	if sw.timer == nil {
		sw.timer = time.NewTimer(wait)
	} else {
		sw.timer.Reset(wait)
	}
	select {
	case <-sw.timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// fault injects the plan's fault at event k, if it has one there: a disconnect (it panics with
// http.ErrAbortHandler, which closes the connection without ending the response) or an error
// event. It returns true when the stream ended.
func (sw *eventWriter) fault(k int) bool {
	s, p, e := sw.s, sw.p, sw.e
	switch k {
	case p.cutAt:
		sw.flush()
		s.disconnects.Add(1)
		e.Fault, e.End = "disconnect", time.Now()
		s.record(e)
		panic(http.ErrAbortHandler)
	case p.errorAt:
		sw.buf = append(sw.buf, `data: {"error":{"message":"injected stream error","type":"server_error","code":500}}`+"\n\n"+"data: [DONE]\n\n"...)
		sw.send()
		sw.flush()
		s.errorEvents.Add(1)
		e.Fault, e.End = "error_event", time.Now()
		s.record(e)
		return true
	}
	return false
}

// writeContent writes content event k (after the stream's opening, before the first) and
// sends it; whether it is flushed at once is stream's to say.
func (sw *eventWriter) writeContent(k int) {
	sh, p := sw.sh, sw.p
	buf := sw.buf
	if k == 0 {
		// Servers open the stream when the first token is ready: vLLM, SGLang and
		// llama.cpp write the role-only chunk just before it, TGI a comment. (Sent at once,
		// before the TTFT wait, it made clients that time the first chunk read TTFT early.)
		buf = append(buf, sh.opening...)
		if sh.role != "" {
			buf = sw.closeChunk(append(append(buf, sw.head...), sh.role...), false, false)
		}
	}
	buf = append(buf, sw.head...)
	buf = append(buf, sh.textOpen...)
	buf = append(buf, sw.s.content(p, k)...)
	sw.pending++
	if k == p.events-1 && sh.lastClose != "" { // TGI: the last content chunk finishes
		buf = append(buf, fmt.Sprintf(sh.lastClose, p.finish)...)
		buf = sw.closeChunk(buf, false, !sw.usageChunk)
	} else {
		buf = append(buf, sh.textClose...)
		buf = sw.closeChunk(buf, false, false)
	}
	sw.buf = buf
	sw.send()
}

// end writes the finishing chunk, the usage chunk where the request asked for one, and [DONE],
// and records the emission as completed.
func (sw *eventWriter) end() {
	s, sh, p, e := sw.s, sw.sh, sw.p, sw.e
	s.events.Add(int64(p.events))
	buf := sw.buf
	if sh.lastClose == "" {
		buf = append(buf, sw.head...)
		buf = append(buf, fmt.Sprintf(sh.finish, p.finish)...)
		buf = sw.closeChunk(buf, sh.usageInLast && !s.cfg.NoUsage, !sw.usageChunk)
	}
	if sw.usageChunk {
		// The usage chunk has no choices, as in OpenAI's API.
		buf = append(buf, sw.head[:len(sw.head)-len(`"choices":[{"index":0,`)]...)
		buf = append(buf, `"choices":[]`...)
		sw.nullUsage = false
		buf = sw.closeChunk(buf, true, true)
	}
	sw.buf = append(buf, "data: [DONE]\n\n"...)
	sw.send()
	// No flush: the server writes what is left with the chunked terminator when the handler
	// returns, in one write, so a client reading to the end of the body (as it must to keep the
	// connection) does not wait for a second one.
	sw.fl = nil
	sw.flush()
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
		prompt, predicted = unit.MS(e.FirstToken.Sub(e.Received)), unit.MS(now.Sub(e.FirstToken))
	} else {
		prompt = unit.MS(now.Sub(e.Received))
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

// whole waits as long as the stream would have taken and answers with one JSON body.
func (s *Server) whole(ctx context.Context, w http.ResponseWriter, chat bool, p *plan, e *Emission, bp *[]byte) {
	wait := p.ttft
	for _, g := range p.gaps {
		wait += g
	}
	if p.batch != nil {
		// The whole answer goes out with its last token.
		for at := range p.batch {
			wait = at.Sub(e.Received)
			if e.FirstDue.IsZero() {
				e.FirstDue = at
			}
			e.EndDue = at
		}
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
		buf = appendUsage(buf, e.InputTokens, s.usageOut(p.tokens))
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

// usageOut is the completion tokens usage reports for a response of tokens: Config.UsageOffset
// more, at least 0.
func (s *Server) usageOut(tokens int) int { return max(tokens+s.cfg.UsageOffset, 0) }
