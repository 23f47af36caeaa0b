package engine

import (
	"fmt"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// InvalidValue is an observation holding a value that cannot be a measurement: a NaN, infinite or
// negative time, a negative or absurd token or item count. The iteration counts as failed (kind
// "invalid_value"), so the value never reaches a summary or a verdict.
type InvalidValue struct{ Err error }

func (e *InvalidValue) Error() string { return "invalid value from the subject: " + e.Err.Error() }
func (e *InvalidValue) Unwrap() error { return e.Err }

// Kind groups these failures for counting.
func (e *InvalidValue) Kind() string { return "invalid_value" }

// checkObservation is the one place where figures from a subject (a worker's or a command's own
// metrics, a server's usage report) are checked before they are summarised.
func checkObservation(o *subject.Observation) error {
	bad := func(err error) error { return &InvalidValue{Err: err} }
	if !o.Start.IsZero() && o.End.Before(o.Start) {
		return bad(fmt.Errorf("the call ended %v before it started", o.Start.Sub(o.End)))
	}
	for k, v := range o.Values {
		if v >= 0 && v <= result.MaxTokens {
			continue // within every bound: the common case, without the catalogue lookup
		}
		if err := result.CheckValue(k, v); err != nil {
			return bad(err)
		}
	}
	if o.CPU < 0 {
		return bad(fmt.Errorf("cpu_ms = %v cannot be negative", o.CPU))
	}
	if o.Items < 0 {
		return bad(fmt.Errorf("items = %d cannot be negative", o.Items))
	}
	if o.InputTokens < 0 || o.InputTokens > result.MaxTokens {
		return bad(fmt.Errorf("input_tokens = %d is not a token count", o.InputTokens))
	}
	if o.OutputTokens < 0 || o.OutputTokens > result.MaxTokens {
		return bad(fmt.Errorf("output_tokens = %d is not a token count", o.OutputTokens))
	}
	for i, t := range o.Tokens {
		if t.Tokens < 0 || t.Tokens > result.MaxTokens {
			return bad(fmt.Errorf("token event %d carries %d tokens", i+1, t.Tokens))
		}
	}
	return nil
}
