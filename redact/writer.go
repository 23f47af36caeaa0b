package redact

import (
	"bytes"
	"io"
	"sync"
)

// maxLine bounds the bytes a Writer holds back waiting for the end of a line.
const maxLine = 64 << 10

// Writer redacts what a process writes (a launched server's log), line by line, before it
// reaches w. Flush writes a last line without a newline.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	red *Redactor
	buf []byte
}

// NewWriter returns a Writer to w through r.
func NewWriter(w io.Writer, r *Redactor) *Writer { return &Writer{w: w, red: r} }

// Write implements io.Writer.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			if len(w.buf) > maxLine { // a very long line: redact what there is
				if err := w.emit(len(w.buf)); err != nil {
					return len(p), err
				}
			}
			return len(p), nil
		}
		if err := w.emit(i + 1); err != nil {
			return len(p), err
		}
	}
}

func (w *Writer) emit(n int) error {
	line := w.red.String(string(w.buf[:n]))
	w.buf = w.buf[n:]
	if len(w.buf) == 0 {
		w.buf = w.buf[:0:0]
	}
	_, err := io.WriteString(w.w, line)
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
