package drive

import (
	"context"
	"errors"
)

// Serving requests in flight run under the run's own context (interrupted), not under one only
// their timeout cancels as an iteration of the single driver does: an interrupted serving run
// stops its requests at once instead of waiting out --timeout, which may be minutes for a slow
// server or one that never answers.

// interrupted reports whether err is a call cut short because the run was interrupted (run is
// the run's context): such a call was not measured to its end, and is dropped, not counted as a
// failed request.
func interrupted(run context.Context, err error) bool {
	return err != nil && run.Err() != nil && errors.Is(err, context.Canceled)
}
