package drive

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferbench/inferbench/internal/base/precise"
	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

func init() { load.RegisterDriver(load.ModeSessions, driveSessions) }

// turnsOf returns the turns of a session of s, looking through the engine's wrappers; 1 when s
// has no sessions.
func turnsOf(s subject.Subject) int {
	for s != nil {
		if t, ok := s.(load.Turner); ok {
			return max(t.Turns(), 1)
		}
		u, ok := s.(unwrapper)
		if !ok {
			return 1
		}
		s = u.Unwrap()
	}
	return 1
}

// driveSessions keeps concurrency conversations going at once: each worker takes a whole session and
// sends its turns in order, each when the previous answer has ended and think_time has passed,
// then takes the next session. Warm-up and measurement count whole sessions: enough of them to
// make warmup_iterations and measurement_iterations requests. Each turn's TTFT and end-to-end
// latency are summarised per turn (the scenario's "turns" section), since history grows with the
// turn and so does the prompt the server must read.
func driveSessions(ctx context.Context, s subject.Subject, c load.Config, sink load.Sink) error {
	turns := turnsOf(s)
	ss := newServingSink(sink, c)
	warm := (c.Warmup() + turns - 1) / turns
	measured := max((c.Measurement()+turns-1)/turns, 1)
	callCtx := ctx // interrupt.go: an interrupted run cuts its requests in flight
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if warm > 0 {
		ss.Begin(load.Warmup)
	}
	var next atomic.Int64
	var measuring sync.Once
	var wg sync.WaitGroup
	for range max(c.Concurrency, 1) {
		wg.Go(func() {
			timer := time.NewTimer(time.Hour)
			defer timer.Stop()
			for ctx.Err() == nil {
				k := int(next.Add(1) - 1)
				if k >= warm+measured {
					ss.markSteadyEnd()
					return
				}
				phase := load.Warmup
				if k >= warm {
					phase = load.Measure
					measuring.Do(func() { ss.Begin(load.Measure) })
				}
				for t := range turns {
					if t > 0 && c.ThinkTime > 0 && !precise.Until(ctx, timer, time.Now().Add(c.ThinkTime)) {
						return
					}
					cctx, ccancel := context.WithTimeout(callCtx, c.IterationTimeout())
					o, err := s.Do(cctx, subject.Request{Index: k*turns + t, Warmup: phase == load.Warmup})
					ccancel()
					if interrupted(callCtx, err) {
						return
					}
					if phase == load.Measure && turns > 1 {
						if o.Values == nil {
							o.Values = map[string]float64{}
						}
						o.Values[figures.ValueTurn] = float64(t) // the figures' window of the turn
					}
					ss.Observe(phase, o, err)
					if err != nil && isFatal(err) {
						cancel(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	r := ss.result(load.ModeSessions)
	ss.report(r, false)
	if rep, ok := sink.(load.Reporter); ok && turns > 1 {
		var st []result.TurnStat
		ss.keeper.WithFigures(func(f *figures.Figures) { st = f.Turns() })
		rep.Extra(result.SectionTurns, st)
	}
	return fatalCause(ctx)
}
