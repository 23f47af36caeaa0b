package drive

import (
	"context"
	"fmt"
	"time"

	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/subject"
)

func init() { load.RegisterDriver(load.ModeTrace, driveTrace) }

// unwrapper is a subject wrapped by the engine (call hooks), which keeps the subject's optional
// abilities behind Unwrap.
type unwrapper interface{ Unwrap() subject.Subject }

// arrivalsOf finds the trace of s, looking through the engine's wrappers.
func arrivalsOf(s subject.Subject) []time.Duration {
	for s != nil {
		if a, ok := s.(load.Arrivals); ok {
			return a.Arrivals()
		}
		u, ok := s.(unwrapper)
		if !ok {
			return nil
		}
		s = u.Unwrap()
	}
	return nil
}

// driveTrace sends the requests of the subject's trace at their times, divided by speedup (default 1):
// an open loop whose schedule is the trace's, so its latencies from the scheduled send
// (ttft_sched_ms, e2e_sched_ms) are free of coordinated omission as in mode rate, and
// max_concurrency and overflow apply the same way. The first warmup_iterations requests of the
// trace are warm-up; the measured ones are the rest of the trace, or the first
// measurement_iterations of them when it is set, and only those due within duration of the
// first measured one when duration is set.
func driveTrace(ctx context.Context, s subject.Subject, c load.Config, sink load.Sink) error {
	at := arrivalsOf(s)
	if len(at) == 0 {
		return fmt.Errorf("mode trace needs a subject whose workload is a trace (openai, workload.format: trace, mooncake or azure)")
	}
	speed := c.Speedup
	if speed == 0 {
		speed = 1
	}
	warm := min(c.Warmup(), len(at)-1)
	n := len(at) - warm
	if c.MeasurementIterations != nil {
		n = min(n, max(*c.MeasurementIterations, 1))
	}
	offsets := make([]time.Duration, 0, warm+n)
	for i := range warm + n {
		if c.Duration > 0 && i > warm && at[i]-at[warm] > time.Duration(float64(c.Duration)*speed) {
			break
		}
		offsets = append(offsets, time.Duration(float64(at[i])/speed))
	}
	ss := newServingSink(sink, c)
	err := dispatch(ctx, s, c, offsets, warm, ss, 0)
	ss.report(ss.result(load.ModeTrace), true)
	return err
}
