package worker

import (
	"fmt"
	"strings"
)

// Error is a structured error the worker replied with. The worker stays usable after one.
type Error struct {
	Op        string // the request that failed: hello, setup, warmup, run, teardown
	Code      string // bad_request, bad_params, unavailable, unsupported, failed
	Message   string
	Traceback string // the worker's traceback for "failed", when it sent one
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("worker %s: %s: %s", e.Op, e.Code, e.Message)
	if e.Traceback != "" {
		msg += "\n" + strings.TrimRight(e.Traceback, "\n")
	}
	return msg
}

// Kind groups the error for counting: its code.
func (e *Error) Kind() string { return e.Code }

// SkipReason returns why the scenario cannot run here when the worker said so (its framework is
// not installed: "unavailable"; the variant, device or dtype is not supported: "unsupported"),
// and "" for a real failure.
func (e *Error) SkipReason() string {
	if e.Code == "unavailable" || e.Code == "unsupported" {
		return e.Message
	}
	return ""
}

// ProcessError is a worker process that failed the protocol: it exited, hung past a timeout, or
// wrote something other than a reply. The process has been killed; the error is fatal to the
// scenario and carries the tail of the worker's stderr.
type ProcessError struct {
	Worker string // adapter or program name
	Op     string // the request in flight
	Reason string
	Stderr string // tail of the worker's stderr
}

func (e *ProcessError) Error() string {
	msg := fmt.Sprintf("worker %s: %s", e.Worker, e.Reason)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += "\nstderr (tail):\n" + indent(s)
	} else {
		msg += " (stderr was empty)"
	}
	return msg
}

// Fatal reports that the worker takes no more calls.
func (e *ProcessError) Fatal() bool { return true }

// Kind groups the error for counting.
func (e *ProcessError) Kind() string { return "worker_process" }

func indent(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return "  " + strings.Join(lines, "\n  ")
}
