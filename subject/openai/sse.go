package openai

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/inferbench/inferbench/internal/netstamp"
)

// Event is one server-sent event.
type Event struct {
	Type string // the "event:" field; empty means "message"
	ID   string // the "id:" field, when the event set one
	// Data is the event's data lines joined by "\n". It is valid until the next call to Scan.
	Data []byte
	// At is when the bytes that completed the event were read from the stream: the moment the
	// event became available, before any parsing.
	At time.Time
}

// MaxEventSize bounds one event's data; a longer event stops the Scanner with an error.
const MaxEventSize = 16 << 20

// Scanner reads server-sent events (the WHATWG EventSource format) from a stream, like
// bufio.Scanner: call Scan until it returns false, read each Event, then check Err.
//
// It accepts the three line endings (LF, CRLF, CR; with CR alone, which no known server sends, an
// event is seen only once a LF or the end of the stream follows it), skips comments (lines starting with ":", used
// as keep-alives), joins multi-line data, removes one space after the colon, and ignores unknown
// fields. Events without data are not dispatched, as in the standard. Unlike the standard, an
// event cut off by the end of the stream (no blank line after it) is still dispatched: a server
// that closes right after its last event should not lose it.
type Scanner struct {
	r       *bufio.Reader
	tr      *timedReader
	ev      Event
	data    []byte
	long    []byte // a line longer than the bufio buffer, being assembled
	hasData bool
	err     error
	done    bool
}

// NewScanner returns a Scanner reading from r.
func NewScanner(r io.Reader) *Scanner {
	tr := &timedReader{r: r}
	return &Scanner{r: bufio.NewReaderSize(tr, bufSize), tr: tr}
}

// bufSize is the read buffer: a few typical chunks. Longer lines are assembled beside it.
const bufSize = 4 << 10

// Reset makes the Scanner read a new stream, keeping its buffers.
func (s *Scanner) Reset(r io.Reader) {
	s.tr.r, s.tr.at, s.tr.stamp = r, time.Time{}, nil
	s.r.Reset(s.tr)
	s.ev, s.hasData, s.err, s.done = Event{}, false, nil, false
	s.data, s.long = shrink(s.data), shrink(s.long)
}

// shrink empties b, dropping it when a huge event grew it.
func shrink(b []byte) []byte {
	if cap(b) > 1<<16 {
		return nil
	}
	return b[:0]
}

// Event returns the event found by the last successful Scan.
func (s *Scanner) Event() Event { return s.ev }

// Err returns the first error other than io.EOF that stopped the Scanner.
func (s *Scanner) Err() error { return s.err }

// Scan advances to the next event. It returns false at the end of the stream or on an error.
func (s *Scanner) Scan() bool {
	if s.done {
		return false
	}
	s.ev = Event{}
	s.data = s.data[:0]
	s.hasData = false
	for {
		line, err := s.line()
		if err != nil {
			s.done = true
			if !errors.Is(err, io.EOF) {
				s.err = err
				return false
			}
			// An event cut off by the end of the stream.
			return s.dispatch()
		}
		if len(line) == 0 {
			if s.dispatch() {
				return true
			}
			continue
		}
		if err := s.field(line); err != nil {
			s.done, s.err = true, err
			return false
		}
	}
}

func (s *Scanner) dispatch() bool {
	if !s.hasData {
		s.ev.Type, s.ev.ID = "", ""
		return false
	}
	s.ev.Data = bytes.TrimSuffix(s.data, []byte{'\n'})
	s.ev.At = s.tr.at
	return true
}

func (s *Scanner) field(line []byte) error {
	if line[0] == ':' {
		return nil // a comment: keep-alive
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if len(s.data)+len(value) > MaxEventSize {
			return fmt.Errorf("server-sent event larger than %d bytes", MaxEventSize)
		}
		s.data = append(s.data, value...)
		s.data = append(s.data, '\n')
		s.hasData = true
	case "event":
		s.ev.Type = string(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			s.ev.ID = string(value)
		}
	}
	return nil
}

// line returns the next line without its ending. The slice is valid until the next call.
func (s *Scanner) line() ([]byte, error) {
	line, err := s.readLine()
	if err != nil {
		return line, err
	}
	return s.split(line), nil
}

// readLine reads up to and including the next LF, assembling lines longer than the buffer.
func (s *Scanner) readLine() ([]byte, error) {
	s.long = s.long[:0]
	for {
		chunk, err := s.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if len(s.long)+len(chunk) > MaxEventSize {
				return nil, fmt.Errorf("server-sent event line longer than %d bytes", MaxEventSize)
			}
			s.long = append(s.long, chunk...)
			continue
		}
		if len(s.long) > 0 {
			s.long = append(s.long, chunk...)
			chunk = s.long
		}
		if err != nil {
			if len(chunk) > 0 && errors.Is(err, io.EOF) {
				return chunk, nil // a last line without an ending
			}
			return nil, err
		}
		return chunk, nil
	}
}

// split handles CR as a line ending inside what ReadSlice returned: a lone CR ends a line, so the
// text after it is pushed back as the start of the next line.
func (s *Scanner) split(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	i := bytes.IndexByte(line, '\r')
	if i < 0 {
		return line
	}
	// Rare: CR-only line endings. Rebuild a reader holding the rest, in order.
	rest := append([]byte(nil), line[i+1:]...)
	rest = append(rest, '\n')
	buffered, _ := s.r.Peek(s.r.Buffered())
	rest = append(rest, buffered...)
	s.r.Discard(len(buffered)) //nolint:errcheck // discarding what Peek returned cannot fail
	s.r = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(rest), s.tr), bufSize)
	return line[:i]
}

// timedReader notes when the data of each read arrived: the connection's kernel timestamp when it
// has one, else the time the read returned.
type timedReader struct {
	r     io.Reader
	at    time.Time
	stamp netstamp.Stamper
}

func (t *timedReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.at = time.Time{}
		if t.stamp != nil {
			t.at = t.stamp.Stamp()
		}
		if t.at.IsZero() {
			t.at = time.Now()
		}
	}
	return n, err
}
