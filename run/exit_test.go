package run

import (
	"errors"
	"fmt"
	"testing"
)

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"no error", nil, ExitOK},
		{"plain error", errors.New("disk full"), ExitError},
		{"bad options", usageErr("--format %q", "x"), ExitUsage},
		{"broken definitions, wrapped", fmt.Errorf("ab: %w", UsageError(errors.New("x.yaml:1:1: unknown key"))), ExitUsage},
		{"regression", RegressionError(errors.New("B regressed")), ExitRegression},
		{"failed scenario wins over a regression, as run reports it", errors.Join(marked{ErrFailed, "1 failed"}, RegressionError(errors.New("1 regression"))), ExitError},
		{"interrupted", marked{ErrInterrupted, "stopped"}, ExitError},
		// merge: an incomplete group that also regressed chooses 3 over its failed scenarios.
		{"code chosen", codeChosen{errors.Join(marked{ErrFailed, "x"}, RegressionError(errors.New("y")))}, ExitRegression},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("%s: ExitCode = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// codeChosen is an error with an ExitCode method, as merge's incomplete group is.
type codeChosen struct{ error }

func (codeChosen) ExitCode() int { return ExitRegression }
