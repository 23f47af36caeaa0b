package run

import "github.com/inferbench/inferbench/internal/base/exit"

// ExitCode is the exit code of a command that ended with err: 0 for nil, the code of an error
// with an ExitCode method (the first in the chain) when there is one, 2 for bad options or
// definitions (ErrUsage), 1 for failed scenarios or an interrupted run, else 3 for a regression
// or an exceeded budget (ErrRegression), else 1.
func ExitCode(err error) int { return exit.Code(err) }
