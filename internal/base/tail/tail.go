// Package tail keeps the end of what a child process writes (its stderr), for the error that
// reports the process's failure.
package tail

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// Buffer keeps the last Max bytes written to it and copies everything to W when set. It is safe
// for concurrent use.
type Buffer struct {
	Max int
	W   io.Writer // nil: nothing copied

	mu  sync.Mutex
	buf []byte
	cut bool // the start of what was written is gone
}

func (t *Buffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.W != nil {
		t.W.Write(b) //nolint:errcheck // the copy is best effort; the tail is what errors carry
	}
	t.buf = append(t.buf, b...)
	if len(t.buf) > 2*t.Max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.Max:]...)
		t.cut = true
	}
	return len(b), nil
}

// String returns the kept tail, from a line boundary when it was cut, without its last newline.
func (t *Buffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.Max || t.cut {
		b = b[max(len(b)-t.Max, 0):]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return strings.TrimRight(string(b), "\n")
}
