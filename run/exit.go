package run

import "errors"

// Exit codes of the command line; ExitCode gives an error its code.
const (
	ExitOK         = 0
	ExitError      = 1 // an error, or failed scenarios
	ExitUsage      = 2 // bad flags or broken definitions
	ExitRegression = 3 // a regression or an exceeded budget
)

// ExitCode is the exit code of a command that ended with err: 0 for nil, the code of an error
// with an ExitCode method (the first in the chain) when there is one, 2 for bad options or
// definitions (ErrUsage), 1 for failed scenarios or an interrupted run, else 3 for a regression
// or an exceeded budget (ErrRegression), else 1.
func ExitCode(err error) int {
	var c interface{ ExitCode() int }
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &c):
		return c.ExitCode()
	case errors.Is(err, ErrUsage):
		return ExitUsage
	case errors.Is(err, ErrInterrupted), errors.Is(err, ErrFailed):
		return ExitError
	case errors.Is(err, ErrRegression):
		return ExitRegression
	}
	return ExitError
}

// RegressionError marks err as a failed comparison (errors.Is(err, ErrRegression), exit code 3),
// for the commands that compare besides Run: compare, ab.
func RegressionError(err error) error {
	if err == nil {
		return nil
	}
	return marked{mark: ErrRegression, msg: err.Error()}
}
