package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/inferbench/inferbench/internal/base/netstamp"
	"github.com/inferbench/inferbench/internal/base/unit"
	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/subject"
	"github.com/valyala/fastjson"
)

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

// tokenCap bounds the content events a stream's observation is made to hold before its first
// event (32 KiB); a longer answer grows it.
const tokenCap = 1024

// MaxStreamEvents bounds the content events of one streamed answer when the request sets no
// max_tokens; with max_tokens the bound is 4 × max_tokens + 1024.
const MaxStreamEvents = 1 << 20

// readStream reads a streamed answer into o; ended says whether it read the body to its end (then
// it needs no drain).
func (s *Subject) readStream(ctx context.Context, body io.Reader, st netstamp.Stamper, o *subject.Observation, maxTokens int) (ended bool, err error) {
	limit := maxEvents(maxTokens)
	if o.Tokens == nil {
		// One allocation for the events asked for (up to tokenCap; 16 when the server chooses),
		// not one per doubling: 6 of a 32-token answer's allocations were its events growing.
		n := maxTokens
		if n <= 0 {
			n = 16
		}
		o.Tokens = make([]subject.TokenEvent, 0, min(n, tokenCap))
	}
	rd, _ := s.readers.Get().(*reader)
	if rd == nil {
		rd = &reader{sc: NewScanner(body)}
	} else {
		rd.sc.Reset(body)
	}
	defer func() {
		ended = rd.sc.atEOF()
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
			return false, fmt.Errorf("%w: %s", ErrStream, errorMessage(ev.Data))
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
			return false, fmt.Errorf("%w: %s", ErrStream, errorMessage(ev.Data))
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
			return false, fmt.Errorf("%w: the stream went on past %d content events (the bound for max_tokens %d)", ErrMalformed, limit, maxTokens)
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
		setValue(o, figures.ValueReadDelay, unit.MS(sc.tr.maxDelay))
	}
	if usageOut >= 0 {
		bad := 0.0
		if usageOut < len(o.Tokens) || (maxTokens > 0 && usageOut > maxTokens) {
			bad = 1
		}
		setValue(o, figures.ValueUsageMismatch, bad)
	}
	setOutputTokens(o, usageOut)
	switch {
	case sc.Err() != nil:
		return false, fmt.Errorf("%w: %v", ErrIncomplete, sc.Err())
	case malformed != nil:
		return false, malformed
	case !done && !finished:
		return false, ErrIncomplete
	}
	return false, nil // ended: the deferred function's
}

// setValue sets one of an observation's values.
func setValue(o *subject.Observation, name string, v float64) {
	if o.Values == nil {
		o.Values = make(map[string]float64, 4)
	}
	o.Values[name] = v
}

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
