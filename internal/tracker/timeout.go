package tracker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// DefaultTimeout bounds each request to a tracking server when neither the caller nor
// $INFERBENCH_EXPORT_TIMEOUT says otherwise: the same deadline as the OTLP exporter's and the
// alerts', so that a tracker that accepts the connection and never answers costs a run seconds,
// not the HTTP client's minutes. (A W&B export, a local process that uploads each run when it
// finishes, is bounded as a whole by WandbOptions.Timeout instead.)
const DefaultTimeout = 2 * time.Second

// TimeoutEnv names the variable that sets the trackers' deadline (a Go duration: 10s, 1500ms),
// as INFERBENCH_ALERT_TIMEOUT sets the alerts'.
const TimeoutEnv = "INFERBENCH_EXPORT_TIMEOUT"

// Timeout returns the deadline $INFERBENCH_EXPORT_TIMEOUT gives, read through lookup, and
// whether it is set. A value that is not a positive duration is an error naming the variable.
func Timeout(lookup func(string) (string, bool)) (time.Duration, bool, error) {
	v, ok := lookup(TimeoutEnv)
	if !ok || strings.TrimSpace(v) == "" {
		return 0, false, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d <= 0 {
		return 0, false, fmt.Errorf("%s=%q: want a duration such as 10s", TimeoutEnv, v)
	}
	return d, true, nil
}

// TimedOut reports whether err is a deadline that passed (a request's or the export's).
func TimedOut(err error) bool { return timedOut(err) }

func timedOut(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
