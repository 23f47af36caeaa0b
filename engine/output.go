package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/inferbench/inferbench/redact"
)

// MaxOutputLog bounds a scenario's output log (WithOutputLogs): past it, the log keeps the first
// and the last half and says how much was cut between them.
const MaxOutputLog = 8 << 20

// WithOutputLogs keeps what each scenario's subject processes write on stdout and stderr (a
// command's output, a worker's log with the benchmark's print() and logging output) in
// dir/<benchmark>__<scenario>.log, also when the scenario succeeds, redacted and bounded by
// MaxOutputLog. The file is listed in the scenario's result (Logs) when something was written.
func WithOutputLogs(dir string) Option { return func(e *Engine) { e.outputLogs = dir } }

// outputLog is one scenario's output log: created on the first byte, redacted line by line, and
// capped: the first half of max is written as it comes, the rest is held as a tail that Close
// writes after a line saying how many bytes were cut.
type outputLog struct {
	red *redact.Writer
	cw  *cappedFile
}

func newOutputLog(path string, max int, r *redact.Redactor) *outputLog {
	cw := &cappedFile{path: path, head: max / 2, tailMax: max - max/2}
	return &outputLog{red: redact.NewWriter(cw, r), cw: cw}
}

// Write implements io.Writer; it is safe for concurrent use (redact.Writer serialises).
func (o *outputLog) Write(p []byte) (int, error) { return o.red.Write(p) }

// Close writes what is held back and closes the file. It reports whether a file was written.
func (o *outputLog) Close() (bool, error) {
	err := o.red.Flush()
	return o.cw.f != nil, errors.Join(err, o.cw.Close())
}

// cappedFile writes the first head bytes to a file and keeps the last tailMax bytes of the rest.
type cappedFile struct {
	mu      sync.Mutex
	path    string
	head    int
	tailMax int
	f       *os.File
	err     error
	written int    // bytes of the head written
	tail    []byte // bytes past the head, the last tailMax of them (up to twice that before trimming)
	dropped int64  // bytes past the head dropped from tail
}

func (c *cappedFile) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	if c.err != nil {
		return n, nil // the log is best effort: a scenario does not fail over it
	}
	if c.f == nil {
		if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
			c.err = err
			return n, nil
		}
		if c.f, c.err = os.Create(c.path); c.err != nil {
			return n, nil
		}
	}
	if c.written < c.head {
		k := min(len(p), c.head-c.written)
		if _, err := c.f.Write(p[:k]); err != nil {
			c.err = err
			return n, nil
		}
		c.written += k
		p = p[k:]
	}
	if len(p) > 0 {
		c.tail = append(c.tail, p...)
		if len(c.tail) > 2*c.tailMax {
			cut := len(c.tail) - c.tailMax
			c.dropped += int64(cut)
			c.tail = append(c.tail[:0], c.tail[cut:]...)
		}
	}
	return n, nil
}

// Close writes the kept tail, after a line saying what was cut when something was.
func (c *cappedFile) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return c.err
	}
	if c.err == nil && len(c.tail) > 0 {
		tail := c.tail
		if len(tail) > c.tailMax {
			c.dropped += int64(len(tail) - c.tailMax)
			tail = tail[len(tail)-c.tailMax:]
		}
		if c.dropped > 0 {
			msg := fmt.Sprintf("\n[inferbench: %d bytes of output cut here; this log keeps the first %d and the last %d bytes]\n", c.dropped, c.head, c.tailMax)
			if _, err := c.f.WriteString(msg); err != nil {
				c.err = err
			}
		}
		if c.err == nil {
			if _, err := c.f.Write(tail); err != nil {
				c.err = err
			}
		}
	}
	if err := c.f.Close(); err != nil && c.err == nil {
		c.err = err
	}
	return c.err
}
