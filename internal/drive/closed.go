package drive

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferbench/inferbench/internal/base/precise"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/subject"
)

// driveClosedLoop keeps Concurrency requests in flight: each of Concurrency workers sends its next
// request as soon as its previous one ends. It sends warmup_iterations warm-up requests first (at
// the same concurrency, not measured), then measures at least measurement_iterations requests and
// for at least min_time, at most max_time. The steady-state window ends when the first worker runs
// out of requests, before the loop drains.
func driveClosedLoop(ctx context.Context, s subject.Subject, c load.Config, sink load.Sink) error {
	ss := newServingSink(sink, c)
	err := closedLoop(ctx, s, c, max(c.Concurrency, 1), ss, 0)
	ss.report(ss.result(load.ModeConcurrency), false)
	return err
}

// driveOffline sends every request at once, with at most max_concurrency in flight (default 1024): a
// closed loop as wide as the work, measuring throughput rather than latency.
func driveOffline(ctx context.Context, s subject.Subject, c load.Config, sink load.Sink) error {
	ss := newServingSink(sink, c)
	err := closedLoop(ctx, s, c, offlineWidth(c), ss, 0)
	ss.report(ss.result(load.ModeOffline), false)
	return err
}

// offlineWidth is the number of workers of an offline loop: max_concurrency (default 1024), but
// no more than there are measured requests.
func offlineWidth(c load.Config) int {
	width := c.MaxConcurrency
	if width == 0 {
		width = defaultOfflineConcurrency
	}
	return max(min(width, c.Measurement()), 1)
}

// closedLoop runs the warm-up and measured phases with conc workers; request indexes start at
// base. It returns the first fatal error.
//
// The workers run straight through from warm-up to measurement: the first warm-up requests issued
// are warm-up, every later one is measured, and warm-up requests still in flight when measurement
// begins finish unmeasured. (Draining the loop between the phases would start the measurement
// with every worker sending at the same instant, the very burst the warm-up is there to leave
// behind.) With ramp_up, worker k of conc sends its first request k/conc of ramp_up late.
func closedLoop(ctx context.Context, s subject.Subject, c load.Config, conc int, ss *servingSink, base int) error {
	callCtx := ctx // interrupt.go: an interrupted run cuts its requests in flight
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var index atomic.Int64
	index.Store(int64(base))

	call := func(p load.Phase) {
		i := int(index.Add(1) - 1)
		cctx, ccancel := context.WithTimeout(callCtx, c.IterationTimeout())
		o, err := s.Do(cctx, subject.Request{Index: i, Warmup: p == load.Warmup})
		ccancel()
		if interrupted(callCtx, err) {
			return
		}
		ss.Observe(p, o, err)
		if err != nil && isFatal(err) {
			cancel(err)
		}
	}
	ph := &phases{c: c, ss: ss, warm: c.Warmup(), want: c.Measurement()}
	if ph.warm > 0 {
		ss.Begin(load.Warmup)
	}
	var wg sync.WaitGroup
	start := time.Now()
	for k := range conc {
		wg.Go(func() {
			if c.RampUp > 0 && k > 0 && !precise.Until(ctx, time.NewTimer(time.Hour), start.Add(c.RampUp*time.Duration(k)/time.Duration(conc))) {
				return
			}
			for ctx.Err() == nil {
				p, ok := ph.next()
				if !ok {
					ss.markSteadyEnd()
					return
				}
				call(p)
			}
		})
	}
	wg.Wait()
	return fatalCause(ctx)
}

// phases hands out a closed loop's requests: warm requests of the warm-up, then measured ones
// until want have been sent and min_time has passed, or max_time has.
type phases struct {
	c          load.Config
	ss         *servingSink
	mu         sync.Mutex
	warm, want int
	issued     int // warm-up requests handed out
	measured   int // measured requests handed out
	start      time.Time
}

// next returns the phase of the next request, or false when there is none.
func (p *phases) next() (load.Phase, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.issued < p.warm {
		p.issued++
		return load.Warmup, true
	}
	if p.start.IsZero() {
		p.ss.Begin(load.Measure)
		p.start = time.Now()
	}
	elapsed := time.Since(p.start)
	if p.c.MaxTime > 0 && elapsed >= p.c.MaxTime {
		return load.Measure, false
	}
	if p.measured < p.want || elapsed < p.c.MinTime {
		p.measured++
		return load.Measure, true
	}
	return load.Measure, false
}
