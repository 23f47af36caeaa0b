// Package exit holds what a command's error means for its exit code: the sentinels a run's
// errors are marked with (package run exports them as run.ErrUsage, run.ErrInterrupted,
// run.ErrFailed and run.ErrRegression), the errors that carry those marks, and the code each
// gets (run.ExitCode). The commands beside run (compare, ab, merge, the store's) mark their own
// errors here, so that one mapping gives every command its code.
package exit

import (
	"errors"
	"fmt"
)

// Exit codes of the command line; Code gives an error its code.
const (
	OK         = 0
	Failure    = 1 // an error, or failed scenarios
	Usage      = 2 // bad flags or broken definitions
	Regression = 3 // a regression or an exceeded budget
)

// The sentinels errors are marked with; package run documents each.
var (
	ErrUsage       = errors.New("usage")
	ErrInterrupted = errors.New("interrupted")
	ErrFailed      = errors.New("scenario failed")
	ErrRegression  = errors.New("regression")
)

// Code is the exit code of a command that ended with err: 0 for nil, the code of an error with
// an ExitCode method (the first in the chain) when there is one, 2 for bad options or
// definitions (ErrUsage), 1 for failed scenarios or an interrupted run, else 3 for a regression
// or an exceeded budget (ErrRegression), else 1.
func Code(err error) int {
	var c interface{ ExitCode() int }
	switch {
	case err == nil:
		return OK
	case errors.As(err, &c):
		return c.ExitCode()
	case errors.Is(err, ErrUsage):
		return Usage
	case errors.Is(err, ErrInterrupted), errors.Is(err, ErrFailed):
		return Failure
	case errors.Is(err, ErrRegression):
		return Regression
	}
	return Failure
}

// Mark returns an error with message msg that errors.Is finds as sentinel, one of the above.
func Mark(sentinel error, msg string) error { return marked{mark: sentinel, msg: msg} }

// marked is an error with its own message that errors.Is finds as one of the sentinels.
type marked struct {
	mark error
	msg  string
}

func (e marked) Error() string { return e.msg }
func (e marked) Unwrap() error { return e.mark }

// usageError is an error about the options (errors.Is(err, ErrUsage)).
type usageError struct{ err error }

func (e *usageError) Error() string   { return e.err.Error() }
func (e *usageError) Unwrap() []error { return []error{e.err, ErrUsage} }

// Usagef is UsageError of a new error, formatted as fmt.Errorf formats it.
func Usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// UsageError marks err as a problem with the options or definitions (errors.Is(err, ErrUsage)).
func UsageError(err error) error {
	if err == nil || errors.Is(err, ErrUsage) {
		return err
	}
	return &usageError{err}
}

// RegressionError marks err as a failed comparison (errors.Is(err, ErrRegression), exit code 3),
// for the commands that compare besides a run: compare, ab.
func RegressionError(err error) error {
	if err == nil {
		return nil
	}
	return marked{mark: ErrRegression, msg: err.Error()}
}
