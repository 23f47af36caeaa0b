package drive

import (
	"context"
	"errors"
	"time"

	"github.com/inferbench/inferbench/internal/base/logs"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/subject"
)

// driveSingle runs warm-up iterations, then measured iterations one at a time: at least
// MeasurementIterations and for at least MinTime, but no longer than MaxTime. Each call gets its
// own Timeout. A subject that implements subject.Batcher is asked for the measured iterations in
// batches, so round trips to it stay out of the measurement.
//
// Cancelling ctx stops the loop after the current call; the call itself runs under a context that
// only its timeout cancels, so an interrupted run keeps the iteration it was in.
func driveSingle(ctx context.Context, s subject.Subject, c load.Config, sink load.Sink) error {
	log := logs.Logger(ctx)
	callCtx := context.WithoutCancel(ctx)
	calls := newCaller(ctx, c.IterationTimeout())
	defer calls.close()
	index := 0
	do := func(warm bool) error {
		o, err := calls.do(s, subject.Request{Index: index, Warmup: warm})
		index++
		phase := load.Measure
		if warm {
			phase = load.Warmup
		}
		sink.Observe(phase, o, err)
		if err != nil && isFatal(err) {
			return err
		}
		return nil
	}
	if c.Warmup() > 0 {
		sink.Begin(load.Warmup)
		log.Debug("warm-up", "iterations", c.Warmup())
	}
	warmStart := time.Now()
	for range c.Warmup() {
		if ctx.Err() != nil {
			log.Debug("stopped during warm-up: interrupted", "done", index)
			return nil
		}
		if err := do(true); err != nil {
			log.Debug("stopped during warm-up: the subject cannot take more calls", "done", index, "err", err)
			return err
		}
	}
	if c.Warmup() > 0 {
		log.Debug("warm-up done", "iterations", index, "took", time.Since(warmStart).Round(time.Microsecond))
	}
	b, batched := s.(subject.Batcher)
	var perCall time.Duration // wall time per call in the last batch; 0 before the first
	sink.Begin(load.Measure)
	start := time.Now()
	n, want := 0, c.Measurement()
	why := "interrupted"
	log.Debug("measuring", "iterations", want, "min_time", c.MinTime, "max_time", c.MaxTime, "timeout", c.IterationTimeout(), "batched", batched)
	defer func() {
		log.Debug("measurement stopped", "why", why, "iterations", n, "took", time.Since(start).Round(time.Microsecond))
	}()
	timed := c.MinTime > 0 || c.MaxTime > 0 // else the loop reads no clock of its own
	for ctx.Err() == nil {
		var elapsed time.Duration
		if timed {
			elapsed = time.Since(start)
		}
		if n >= want && elapsed >= c.MinTime {
			why = "reached the iterations asked and min_time"
			break
		}
		if c.MaxTime > 0 && elapsed >= c.MaxTime {
			why = "reached max_time"
			break
		}
		if !batched {
			if err := do(false); err != nil {
				why = "the subject cannot take more calls: " + err.Error()
				return err
			}
			n++
			continue
		}
		k := batchSize(want-n, perCall)
		log.Debug("batch", "iterations", k, "done", n, "per_call", perCall)
		cctx, cancel := context.WithTimeout(callCtx, c.IterationTimeout()*time.Duration(k))
		done, pace, err := batch(cctx, b, index, k, sink)
		cancel()
		if pace > 0 {
			perCall = pace
		}
		index += done
		n += done
		if err != nil {
			n++ // the failed iteration
		}
		if err != nil && isFatal(err) {
			why = "the subject cannot take more calls: " + err.Error()
			return err
		}
	}
	return nil
}

// batch asks b for k measured iterations from index and passes them to sink, and its error as one
// failed iteration more. It returns the calls done and their wall time each (0 without any).
func batch(ctx context.Context, b subject.Batcher, index, k int, sink load.Sink) (done int, perCall time.Duration, err error) {
	start := time.Now()
	obs, err := b.DoBatch(ctx, subject.Request{Index: index}, k)
	if len(obs) > 0 {
		perCall = time.Since(start) / time.Duration(len(obs))
	}
	for _, o := range obs {
		sink.Observe(load.Measure, o, nil)
	}
	if err != nil {
		sink.Observe(load.Measure, subject.Observation{}, err)
	}
	return len(obs), perCall, err
}

// batchTarget is about how long one batch may take, so that Ctrl-C (honoured between batches)
// answers within about a second even for slow models.
const batchTarget = time.Second

// batchSize is how many iterations a batching subject runs per round trip: what is left, at most
// 100, as many as fit in batchTarget at the last batch's pace (10 before the pace is known), and
// one at a time when only time bounds are left to meet.
func batchSize(left int, perCall time.Duration) int {
	k := 10
	if perCall > 0 {
		k = int(batchTarget / perCall)
	}
	return max(1, min(k, left, 100))
}

// fatal marks an error after which a subject cannot take more calls (its process died).
type fatal interface{ Fatal() bool }

func isFatal(err error) bool {
	var f fatal
	return errors.As(err, &f) && f.Fatal()
}
