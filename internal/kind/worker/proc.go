package worker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/procgroup"
	"github.com/inferbench/inferbench/internal/base/tail"
)

// proc is one worker process and the protocol spoken with it: one request line out, one reply line
// back. It is not safe for concurrent requests; Worker serialises them.
type proc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan []byte // reply lines; closed at end of output
	exited  chan struct{}
	waitErr error // set before exited is closed
	stderr  *tail.Buffer
	id      int
	broken  error // a protocol failure: the process is killed and takes no more requests
	readErr error // why reading stdout stopped early; set before lines is closed
	label   string
	untrack func()       // forgets the process group once waited for
	log     *slog.Logger // debug records of the protocol messages; nil logs none
}

// start launches argv and begins reading its stdout.
func start(argv []string, dir string, env []string, logw io.Writer, label string) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	p := &proc{cmd: cmd, lines: make(chan []byte, 1), exited: make(chan struct{}),
		stderr: &tail.Buffer{Max: 8 << 10, W: logw}, label: label}
	cmd.Stderr = p.stderr
	cmd.WaitDelay = 2 * time.Second
	setProcessGroup(cmd)
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	p.untrack = procgroup.Add(cmd.Process.Pid) // the second Ctrl-C kills it (inferbench.Run)
	go p.read(out)
	return p, nil
}

// MaxLineSize bounds one line of the worker protocol (a reply of a batch of at most 100
// iterations is far smaller). A longer line is a protocol failure: the process is killed.
const MaxLineSize = 16 << 20

// read forwards stdout lines until EOF or a line over MaxLineSize, then waits for the process.
func (p *proc) read(out io.Reader) {
	r := bufio.NewReaderSize(out, 1<<16)
	for {
		line, err := readLine(r, MaxLineSize)
		if errors.Is(err, errLineTooLong) {
			p.readErr = fmt.Errorf("wrote a line longer than %d bytes (MaxLineSize)", MaxLineSize)
			p.kill()
			io.Copy(io.Discard, out) //nolint:errcheck // draining the pipe of a killed process
			break
		}
		if len(bytes.TrimSpace(line)) > 0 {
			p.lines <- line
		}
		if err != nil {
			break
		}
	}
	close(p.lines)
	p.waitErr = p.cmd.Wait()
	p.untrack()
	close(p.exited)
}

var errLineTooLong = errors.New("line too long")

// readLine reads up to and including the next LF, at most limit bytes.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			return nil, errLineTooLong
		}
		if err == bufio.ErrBufferFull {
			line = append(line, chunk...)
			continue
		}
		if line == nil {
			return append([]byte(nil), chunk...), err
		}
		return append(line, chunk...), err
	}
}

// reply is the envelope of every reply; the body is decoded again into the op's own type.
type reply struct {
	ID    *int       `json:"id"`
	OK    bool       `json:"ok"`
	Error *wireError `json:"error"`
}

type wireError struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Traceback string `json:"traceback"`
}

// call sends one request and decodes the reply's body into out. A worker that exits, hangs past
// timeout or ctx's deadline, or writes something other than the awaited reply is killed and the
// returned error (a *ProcessError) carries the tail of its stderr. A structured error reply is
// returned as an *Error and leaves the worker usable.
func (p *proc) call(ctx context.Context, op string, req map[string]any, timeout time.Duration, out any) error {
	if p.broken != nil {
		return p.broken
	}
	p.id++
	msg := map[string]any{"id": p.id, "op": op}
	for k, v := range req {
		msg[k] = v
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("worker %s: encoding %s request: %w", p.label, op, err)
	}
	debug := p.log != nil && p.log.Enabled(ctx, slog.LevelDebug)
	sent := time.Now()
	if debug {
		p.log.Debug("worker request", "op", op, "id", p.id, "line", clip(b, maxDebugLine))
	}
	b = append(b, '\n')
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	if _, err := p.stdin.Write(b); err != nil {
		// The process is gone; report how it ended.
		select {
		case <-p.exited:
			return p.fail(op, "exited before "+op+exitText(p.waitErr))
		case <-time.After(3 * time.Second):
			return p.fail(op, "could not send "+op+": "+err.Error())
		}
	}
	select {
	case line, ok := <-p.lines:
		if !ok {
			if p.readErr != nil {
				return p.fail(op, p.readErr.Error()+" during "+op)
			}
			select {
			case <-p.exited:
				return p.fail(op, "exited during "+op+exitText(p.waitErr))
			case <-time.After(3 * time.Second):
				return p.fail(op, "closed its output during "+op)
			}
		}
		if debug {
			p.log.Debug("worker reply", "op", op, "id", p.id, "after", time.Since(sent).Round(time.Microsecond), "bytes", len(line), "line", clip(line, maxDebugLine))
		}
		var env reply
		if err := json.Unmarshal(line, &env); err != nil || env.ID == nil {
			return p.fail(op, fmt.Sprintf("wrote a line that is not a protocol reply: %q", clip(line, 200)))
		}
		if *env.ID != p.id {
			return p.fail(op, fmt.Sprintf("replied to request %d while %d was awaited", *env.ID, p.id))
		}
		if !env.OK {
			e := &Error{Op: op, Code: "failed"}
			if env.Error != nil {
				e.Code, e.Message, e.Traceback = env.Error.Code, env.Error.Message, env.Error.Traceback
			}
			return e
		}
		if out != nil {
			if err := json.Unmarshal(line, out); err != nil {
				return p.fail(op, fmt.Sprintf("wrote a malformed %s reply: %v", op, err))
			}
		}
		return nil
	case <-timer:
		return p.fail(op, fmt.Sprintf("did not answer %s within %s (hung?)", op, timeout))
	case <-ctx.Done():
		return p.fail(op, fmt.Sprintf("%s interrupted: %v", op, context.Cause(ctx)))
	}
}

// maxDebugLine bounds the part of a protocol line a debug record shows.
const maxDebugLine = 1024

// fail kills the process, remembers why, and returns the error with the stderr tail.
func (p *proc) fail(op, why string) error {
	if p.log != nil {
		p.log.Debug("worker failed: killed", "op", op, "why", why)
	}
	p.kill()
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
	}
	p.broken = &ProcessError{Worker: p.label, Op: op, Reason: why, Stderr: p.stderr.String()}
	return p.broken
}

// kill ends the process and its children.
func (p *proc) kill() {
	if p.cmd.Process == nil {
		return
	}
	killGroup(p.cmd)
}

// close asks the worker to tear down, then closes its input and waits for it to exit, killing it
// when it does not within grace.
func (p *proc) close(grace time.Duration) error {
	var err error
	if p.broken == nil {
		err = p.call(context.Background(), "teardown", nil, grace, nil)
		var pe *ProcessError
		if errors.As(err, &pe) {
			return err // already killed
		}
	}
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(grace):
		p.kill()
		<-p.exited
		if err == nil && p.broken == nil {
			err = fmt.Errorf("worker %s: did not exit within %s of teardown; killed", p.label, grace)
		}
	}
	if p.broken != nil {
		return nil // the failure was reported where it happened
	}
	return err
}

func exitText(err error) string {
	if err == nil {
		return " (exit status 0)"
	}
	return " (" + err.Error() + ")"
}

func clip(b []byte, n int) string {
	s := strings.TrimRight(string(b), "\r\n")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
