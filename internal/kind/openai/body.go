package openai

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/inferbench/inferbench/internal/base/readall"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/subject"
	"github.com/valyala/fastjson"
)

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
