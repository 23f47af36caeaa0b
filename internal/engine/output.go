package engine

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/inferbench/inferbench/internal/redact"
)

// maxOutputLog bounds a scenario's output log (WithOutputLogs): past it, the log keeps the first
// and the last half and says how much was cut between them.
const maxOutputLog = 8 << 20

// WithOutputLogs keeps what each scenario's subject processes write on stdout and stderr (a
// command's output, a worker's log with the benchmark's print() and logging output) in
// dir/<benchmark>__<scenario>.log, also when the scenario succeeds, redacted and bounded by
// maxOutputLog. The file is listed in the scenario's result (Logs) when something was written.
func WithOutputLogs(dir string) Option { return func(e *Engine) { e.outputLogs = dir } }

// outputLog is one scenario's output log. Writes only copy bytes into memory (at most max of
// them: the first half, and the last half of the rest), so that a chatty benchmark pays no
// redaction or disk write while it is measured; Close redacts what was kept and writes the file,
// saying how many bytes were cut between the halves.
//
// Note: writing the log as it comes (redacted line by line) cost 25-50 µs per line here, inside
// a command's measured call; a hard kill now loses the log of the scenario it interrupts (a
// failing worker's stderr tail is in its error either way).
type outputLog struct {
	mu      sync.Mutex
	path    string
	red     Redactor
	headMax int
	tailMax int
	head    []byte
	tail    []byte // bytes past the head: the last tailMax of them (up to twice that before trimming)
	dropped int64  // bytes past the head dropped from tail
}

func newOutputLog(path string, max int, r Redactor) *outputLog {
	return &outputLog{path: path, red: r, headMax: max / 2, tailMax: max - max/2}
}

// Write implements io.Writer; it is safe for concurrent use.
func (o *outputLog) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	if o.head == nil {
		// Room for all of it at once: no copy while the subject writes (a call is measured).
		o.head = make([]byte, 0, o.headMax)
	}
	if k := min(len(p), o.headMax-len(o.head)); k > 0 {
		o.head = append(o.head, p[:k]...)
		p = p[k:]
	}
	if len(p) > 0 {
		if o.tail == nil {
			o.tail = make([]byte, 0, 2*o.tailMax)
		}
		o.tail = append(o.tail, p...)
		if len(o.tail) > 2*o.tailMax {
			cut := len(o.tail) - o.tailMax
			o.dropped += int64(cut)
			o.tail = append(o.tail[:0], o.tail[cut:]...)
		}
	}
	return n, nil
}

// Close writes the file, redacted, when anything was written; it reports whether it did.
func (o *outputLog) Close() (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.head) == 0 {
		return false, nil
	}
	head, tail := o.head, o.tail
	if len(tail) > o.tailMax {
		o.dropped += int64(len(tail) - o.tailMax)
		tail = tail[len(tail)-o.tailMax:]
	}
	cut := o.dropped
	if cut > 0 {
		// Whole lines on either side of the cut, so that no secret is redacted in halves.
		if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
			cut += int64(len(head) - i - 1)
			head = head[:i+1]
		}
		if i := bytes.IndexByte(tail, '\n'); i >= 0 {
			cut += int64(i + 1)
			tail = tail[i+1:]
		}
	}
	if err := os.MkdirAll(filepath.Dir(o.path), 0o755); err != nil {
		return false, err
	}
	f, err := os.Create(o.path)
	if err != nil {
		return false, err
	}
	w := redact.NewWriter(f, o.red)
	_, err = w.Write(head)
	if cut > 0 && err == nil {
		_, err = fmt.Fprintf(w, "\n[inferbench: %d bytes of output cut here; this log keeps about the first %d and the last %d bytes]\n", cut, o.headMax, o.tailMax)
	}
	if err == nil {
		_, err = w.Write(tail)
	}
	return true, errors.Join(err, w.Flush(), f.Close())
}
