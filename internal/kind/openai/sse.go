package openai

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/inferbench/inferbench/internal/base/netstamp"
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
// It accepts the three line endings of the standard (LF, CRLF and CR alone) in time linear in the
// stream's length, and dispatches an event as soon as the line ending the blank line arrives. It
// skips comments (lines starting with ":", used as keep-alives), joins multi-line data, removes
// one space after the colon, and ignores unknown fields. Events without data are not dispatched,
// as in the standard. Unlike the standard, an event cut off by the end of the stream (no blank
// line after it) is still dispatched: a server that closes right after its last event should not
// lose it. A line or an event's data longer than MaxEventSize stops the Scanner with an error.
type Scanner struct {
	tr      *timedReader
	lr      lineReader
	ev      Event
	data    []byte
	hasData bool
	err     error
	done    bool
}

// NewScanner returns a Scanner reading from r.
func NewScanner(r io.Reader) *Scanner {
	tr := &timedReader{r: r}
	s := &Scanner{tr: tr}
	s.lr.reset(tr)
	return s
}

// bufSize is the read buffer: a few typical chunks. It grows for longer lines, up to MaxEventSize.
const bufSize = 4 << 10

// Reset makes the Scanner read a new stream, keeping its buffers.
func (s *Scanner) Reset(r io.Reader) {
	s.tr.r, s.tr.at, s.tr.stamp, s.tr.maxDelay = r, time.Time{}, nil, 0
	s.lr.reset(s.tr)
	s.ev, s.hasData, s.err, s.done = Event{}, false, nil, false
	s.data = shrink(s.data)
}

// shrink empties b, dropping it when a huge event grew it.
func shrink(b []byte) []byte {
	if cap(b) > 1<<16 {
		return nil
	}
	return b[:0]
}

// atEOF says whether the stream was read to its end.
func (s *Scanner) atEOF() bool { return s.lr.err == io.EOF }

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
			return fmt.Errorf("server-sent event larger than %d bytes (MaxEventSize)", MaxEventSize)
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
func (s *Scanner) line() ([]byte, error) { return s.lr.next() }

// lineReader splits a stream into lines ended by LF, CRLF or CR. Each byte is searched once for
// each of the two endings (bytes.IndexByte), so a stream of any line endings is read in linear
// time.
type lineReader struct {
	r          io.Reader
	buf        []byte
	start, end int  // the unread bytes are buf[start:end]
	lf, cr     int  // index of the next LF / CR at or after start, or -1: none in buf[..:lfTo/crTo]
	lfTo, crTo int  // how far buf was searched for LF / CR
	skipLF     bool // the last line ended with a CR at the end of the buffer: a LF next is its ending
	err        error
}

func (l *lineReader) reset(r io.Reader) {
	if cap(l.buf) > 1<<16 || l.buf == nil {
		l.buf = make([]byte, bufSize)
	}
	l.buf = l.buf[:cap(l.buf)]
	*l = lineReader{r: r, buf: l.buf, lf: -1, cr: -1}
}

// find returns the index of the next c in buf[start:end], or -1, searching no byte twice.
func (l *lineReader) find(c byte, at, to *int) int {
	if *at >= l.start {
		return *at
	}
	from := max(l.start, *to)
	*to = l.end
	if i := bytes.IndexByte(l.buf[from:l.end], c); i >= 0 {
		*at, *to = from+i, from+i+1
		return *at
	}
	*at = -1
	return -1
}

func (l *lineReader) next() ([]byte, error) {
	for {
		if l.skipLF && l.start < l.end {
			if l.buf[l.start] == '\n' {
				l.start++
			}
			l.skipLF = false
		}
		lf, cr := l.find('\n', &l.lf, &l.lfTo), l.find('\r', &l.cr, &l.crTo)
		i := lf
		if cr >= 0 && (i < 0 || cr < i) {
			i = cr
		}
		if i >= 0 {
			line := l.buf[l.start:i]
			l.start = i + 1
			if i == cr {
				if l.start < l.end {
					if l.buf[l.start] == '\n' {
						l.start++
					}
				} else {
					l.skipLF = true
				}
			}
			return line, nil
		}
		if l.err != nil {
			if l.start < l.end { // a last line without an ending
				line := l.buf[l.start:l.end]
				l.start = l.end
				return line, nil
			}
			return nil, l.err
		}
		if err := l.fill(); err != nil {
			return nil, err
		}
	}
}

// fill reads more of the stream, first moving the unread bytes to the front, growing the buffer
// when a line fills it.
func (l *lineReader) fill() error {
	if l.start > 0 {
		n := copy(l.buf, l.buf[l.start:l.end])
		shift := l.start
		l.start, l.end = 0, n
		l.lfTo, l.crTo = max(0, l.lfTo-shift), max(0, l.crTo-shift)
		l.lf, l.cr = -1, -1 // none in what was searched
	}
	if l.end == len(l.buf) {
		if len(l.buf) >= MaxEventSize {
			return fmt.Errorf("server-sent event line longer than %d bytes (MaxEventSize)", MaxEventSize)
		}
		l.buf = append(l.buf, make([]byte, len(l.buf))...)
		l.buf = l.buf[:cap(l.buf)]
	}
	n, err := l.r.Read(l.buf[l.end:])
	l.end += n
	if err != nil {
		l.err = err
	}
	return nil
}

// timedReader notes when the data of each read arrived: the connection's kernel timestamp when it
// has one, else the time the read returned. With kernel timestamps it also keeps the longest
// delay from the kernel receiving data to the read returning it: the client's own lateness.
type timedReader struct {
	r        io.Reader
	at       time.Time
	stamp    netstamp.Stamper
	maxDelay time.Duration
}

func (t *timedReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		now := time.Now()
		t.at = time.Time{}
		if t.stamp != nil {
			t.at = t.stamp.Stamp()
		}
		if t.at.IsZero() || t.at.After(now) {
			t.at = now
		} else if d := now.Sub(t.at); d > t.maxDelay && d < time.Minute {
			t.maxDelay = d
		}
	}
	return n, err
}
