package redact

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// maxLine bounds the bytes a Writer holds back waiting for the end of a line.
const maxLine = 64 << 10

// Writer redacts what a process writes (a launched server's log), line by line, before it
// reaches w. Flush writes a last line without a newline.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	red Masker
	buf []byte
}

// NewWriter returns a Writer to w through m; a nil m masks secrets by their shape alone (as the
// zero Redactor does).
func NewWriter(w io.Writer, m Masker) *Writer {
	if m == nil {
		m = &Redactor{}
	}
	return &Writer{w: w, red: m}
}

// Write implements io.Writer. It passes on every whole line in p, redacted, in one write to w: a
// run of lines that holds no candidate secret (Redactor.clean) at once, the others line by line.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	i := bytes.LastIndexByte(w.buf, '\n')
	if i < 0 {
		if len(w.buf) > maxLine { // a very long line: redact what there is
			return len(p), w.emit(len(w.buf))
		}
		return len(p), nil
	}
	return len(p), w.emit(i + 1)
}

// emit writes the first n bytes held, redacted line by line, and keeps the rest.
func (w *Writer) emit(n int) error {
	chunk := string(w.buf[:n])
	w.buf = w.buf[n:]
	if len(w.buf) == 0 {
		w.buf = w.buf[:0:0]
	}
	if r, ok := w.red.(*Redactor); !ok || r.candidates(chunk) != 0 {
		var out strings.Builder
		out.Grow(len(chunk))
		for rest := chunk; rest != ""; {
			line, tail, _ := strings.Cut(rest, "\n")
			out.WriteString(w.red.String(line))
			if len(line) < len(rest) {
				out.WriteByte('\n')
			}
			rest = tail
		}
		chunk = out.String()
	}
	_, err := io.WriteString(w.w, chunk)
	return err
}

// Flush writes what is held back.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) == 0 {
		return nil
	}
	return w.emit(len(w.buf))
}
