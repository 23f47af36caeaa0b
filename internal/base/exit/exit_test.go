package exit

import (
	"errors"
	"fmt"
	"testing"
)

func TestCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"no error", nil, OK},
		{"plain error", errors.New("disk full"), Failure},
		{"bad options", Usagef("--format %q", "x"), Usage},
		{"broken definitions, wrapped", fmt.Errorf("ab: %w", UsageError(errors.New("x.yaml:1:1: unknown key"))), Usage},
		{"regression", RegressionError(errors.New("B regressed")), Regression},
		{"failed scenario wins over a regression, as run reports it", errors.Join(Mark(ErrFailed, "1 failed"), RegressionError(errors.New("1 regression"))), Failure},
		{"interrupted", Mark(ErrInterrupted, "stopped"), Failure},
		// merge: an incomplete group that also regressed chooses 3 over its failed scenarios.
		{"code chosen", codeChosen{errors.Join(Mark(ErrFailed, "x"), RegressionError(errors.New("y")))}, Regression},
	} {
		if got := Code(tc.err); got != tc.want {
			t.Errorf("%s: Code = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// codeChosen is an error with an ExitCode method, as merge's incomplete group is.
type codeChosen struct{ error }

func (codeChosen) ExitCode() int { return Regression }
