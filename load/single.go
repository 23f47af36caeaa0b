package load

import (
	"context"
	"errors"
	"time"

	"github.com/inferbench/inferbench/subject"
)

// Single runs warm-up iterations, then measured iterations one at a time: at least
// MeasurementIterations and for at least MinTime, but no longer than MaxTime. Each call gets its
// own Timeout. A subject that implements subject.Batcher is asked for the measured iterations in
// batches, so round trips to it stay out of the measurement.
//
// Cancelling ctx stops the loop after the current call; the call itself runs under a context that
// only its timeout cancels, so an interrupted run keeps the iteration it was in.
func Single(ctx context.Context, s subject.Subject, c Config, sink Sink) error {
	callCtx := context.WithoutCancel(ctx)
	calls := newCaller(ctx, c.IterationTimeout())
	defer calls.close()
	index := 0
	do := func(warm bool) error {
		o, err := calls.do(s, subject.Request{Index: index, Warmup: warm})
		index++
		phase := Measure
		if warm {
			phase = Warmup
		}
		sink.Observe(phase, o, err)
		if err != nil && isFatal(err) {
			return err
		}
		return nil
	}
	if c.Warmup() > 0 {
		sink.Begin(Warmup)
	}
	for range c.Warmup() {
		if ctx.Err() != nil {
			return nil
		}
		if err := do(true); err != nil {
			return err
		}
	}
	b, batched := s.(subject.Batcher)
	sink.Begin(Measure)
	start := time.Now()
	n, want := 0, c.Measurement()
	for ctx.Err() == nil {
		elapsed := time.Since(start)
		if n >= want && elapsed >= c.MinTime {
			break
		}
		if c.MaxTime > 0 && elapsed >= c.MaxTime {
			break
		}
		if !batched {
			if err := do(false); err != nil {
				return err
			}
			n++
			continue
		}
		k := batchSize(want - n)
		cctx, cancel := context.WithTimeout(callCtx, c.IterationTimeout()*time.Duration(k))
		obs, err := b.DoBatch(cctx, subject.Request{Index: index}, k)
		cancel()
		for _, o := range obs {
			sink.Observe(Measure, o, nil)
		}
		if err != nil {
			sink.Observe(Measure, subject.Observation{}, err)
			n++
		}
		index += len(obs)
		n += len(obs)
		if err != nil && isFatal(err) {
			return err
		}
	}
	return nil
}

// batchSize is how many iterations a batching subject runs per round trip: what is left, at most
// 100, and one at a time when only time bounds are left to meet.
func batchSize(left int) int {
	switch {
	case left <= 0:
		return 1
	case left > 100:
		return 100
	}
	return left
}

// Fatal marks an error after which a subject cannot take more calls (its process died).
type Fatal interface{ Fatal() bool }

func isFatal(err error) bool {
	var f Fatal
	return errors.As(err, &f) && f.Fatal()
}
