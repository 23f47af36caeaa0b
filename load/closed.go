package load

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferbench/inferbench/subject"
)

// ClosedLoop keeps Concurrency requests in flight: each of Concurrency workers sends its next
// request as soon as its previous one ends. It sends warmup_iterations warm-up requests first (at
// the same concurrency, not measured), then measures at least measurement_iterations requests and
// for at least min_time, at most max_time. The steady-state window ends when the first worker runs
// out of requests, before the loop drains.
func ClosedLoop(ctx context.Context, s subject.Subject, c Config, sink Sink) error {
	ss := newServingSink(sink, c)
	err := closedLoop(ctx, s, c, max(c.Concurrency, 1), ss, 0)
	ss.report(ss.result(ModeConcurrency), false)
	return err
}

// Offline sends every request at once, with at most max_concurrency in flight (default 1024): a
// closed loop as wide as the work, measuring throughput rather than latency.
func Offline(ctx context.Context, s subject.Subject, c Config, sink Sink) error {
	width := c.MaxConcurrency
	if width == 0 {
		width = DefaultOfflineConcurrency
	}
	ss := newServingSink(sink, c)
	err := closedLoop(ctx, s, c, max(min(width, c.Measurement()), 1), ss, 0)
	ss.report(ss.result(ModeOffline), false)
	return err
}

// closedLoop runs the warm-up and measured phases with conc workers; request indexes start at
// base. It returns the first fatal error.
func closedLoop(ctx context.Context, s subject.Subject, c Config, conc int, ss *servingSink, base int) error {
	callCtx := context.WithoutCancel(ctx)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	next.Store(int64(base))

	call := func(p Phase) {
		i := int(next.Add(1) - 1)
		cctx, ccancel := context.WithTimeout(callCtx, c.IterationTimeout())
		o, err := s.Do(cctx, subject.Request{Index: i, Warmup: p == Warmup})
		ccancel()
		ss.Observe(p, o, err)
		if err != nil && isFatal(err) {
			cancel(err)
		}
	}
	// run starts conc workers that call until more says stop, and waits for them.
	run := func(p Phase, more func() bool) {
		var wg sync.WaitGroup
		for range conc {
			wg.Go(func() {
				for ctx.Err() == nil && more() {
					call(p)
				}
				if p == Measure {
					ss.markSteadyEnd()
				}
			})
		}
		wg.Wait()
	}

	if w := c.Warmup(); w > 0 {
		ss.Begin(Warmup)
		var issued atomic.Int64
		run(Warmup, func() bool { return issued.Add(1) <= int64(w) })
	}
	if err := context.Cause(ctx); err != nil && isFatal(err) {
		return err
	}
	ss.Begin(Measure)
	start := time.Now()
	want := int64(c.Measurement())
	var issued atomic.Int64
	run(Measure, func() bool {
		elapsed := time.Since(start)
		if c.MaxTime > 0 && elapsed >= c.MaxTime {
			return false
		}
		return issued.Add(1) <= want || elapsed < c.MinTime
	})
	if err := context.Cause(ctx); err != nil && isFatal(err) {
		return err
	}
	return nil
}
