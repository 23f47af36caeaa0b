package drive

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/inferbench/inferbench/internal/base/precise"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/subject"
)

// driveOpenLoop sends requests on an arrival schedule computed before the first request from the rate,
// the arrival process and the seed, whatever the server does: a slow server makes requests pile
// up rather than slowing the load, so latencies measured from the scheduled send time are free of
// coordinated omission. Warm-up requests come first (warmup_time long, or warmup_iterations of
// them); then duration's worth of measured requests, or measurement_iterations of them.
//
// With max_concurrency, a request due while that many are in flight waits for a slot and counts
// as late, or with overflow drop is not sent and counts as dropped. Each request's schedule lag
// (actual minus scheduled send) is recorded; a p99 above 1 ms marks the scenario client_bound.
func driveOpenLoop(ctx context.Context, s subject.Subject, c load.Config, sink load.Sink) error {
	rate := c.Rate
	if c.RateRamp != nil {
		if err := c.RateRamp.Validate(); err != nil {
			return err
		}
		rate = c.RateRamp.Start
	}
	if rate <= 0 {
		return fmt.Errorf("mode rate needs rate (requests per second), in load: or as a matrix axis, or a rate_ramp")
	}
	ss := newServingSink(sink, c)
	err := openLoop(ctx, s, c, rate, ss, 0, true)
	ss.report(ss.result(load.ModeRate), true)
	return err
}

// sendOffsets returns the send offsets of an open loop at rate requests per second from its start:
// first the warm-up requests (the count is returned), then the measured ones. It is a function of
// the configuration and the seed only.
//
// The measured part is conditioned on the target: n = rate × duration requests (or
// measurement_iterations of them) whose gaps are drawn from the arrival process and then scaled
// so that the n requests and the gap after the last span exactly n / rate seconds. For poisson
// arrivals that is a poisson process conditioned on its count (uniformly scattered arrivals); it
// keeps a run's achieved rate on its target instead of off by the draw's luck (±0.4% for 60,000
// requests).
//
// With a rate_ramp (c.RateRamp) rate is the warm-up's, and the measured requests follow the ramp:
// gaps drawn as for a rate of 1 and scaled to sum to n, their running sums u_k mapped to the time
// t_k at which the ramp expects u_k requests (time rescaling of the arrival process); with a
// duration, n is the ramp's expected count over it.
func sendOffsets(c load.Config, rate float64) (offsets []time.Duration, warm int) {
	r := rand.New(rand.NewPCG(c.Seed, 0x5c4ed))
	mean := 1 / rate
	gap := func() float64 {
		switch c.Arrival {
		case "constant":
			return mean
		case "gamma":
			return stats.GammaVariate(r, c.Burstiness) * mean / c.Burstiness
		}
		return r.ExpFloat64() * mean
	}
	var t float64 // seconds
	if c.WarmupTime > 0 {
		for t < c.WarmupTime.Seconds() {
			offsets = append(offsets, secs(t))
			t += gap()
		}
	} else {
		for range c.Warmup() {
			offsets = append(offsets, secs(t))
			t += gap()
		}
	}
	warm = len(offsets)
	n := c.Measurement()
	ramp, rampS := c.RateRamp, 0.0
	if ramp != nil {
		rampS = c.Duration.Seconds()
		if c.Duration > 0 {
			n = max(int(math.Round(rampCumulative(ramp, rampS, rampS))), 1)
		} else {
			rampS = rampLength(ramp, n)
		}
		mean = 1 // unit-rate gaps, rescaled below
	} else if c.Duration > 0 {
		n = max(int(math.Round(rate*c.Duration.Seconds())), 1)
	}
	gaps := make([]float64, n) // gaps[k]: after measured request k
	sum := 0.0
	for k := range gaps {
		gaps[k] = gap()
		sum += gaps[k]
	}
	scale := float64(n) * mean / sum
	if ramp != nil {
		u := 0.0
		for _, g := range gaps {
			offsets = append(offsets, secs(t+rampAt(ramp, u, rampS)))
			u += g * scale
		}
		return offsets, warm
	}
	for _, g := range gaps {
		offsets = append(offsets, secs(t))
		t += g * scale
	}
	return offsets, warm
}

// secs converts seconds to a Duration, rounding to the nanosecond.
func secs(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// openLoop runs one open loop at rate; request indexes start at base. With warm false the
// schedule has no warm-up (sweep steps after the first).
func openLoop(ctx context.Context, s subject.Subject, c load.Config, rate float64, ss *servingSink, base int, warm bool) error {
	if !warm {
		zero := 0
		c.WarmupIterations, c.WarmupTime = &zero, 0
	}
	offsets, nWarm := sendOffsets(c, rate)
	return dispatch(ctx, s, c, offsets, nWarm, ss, base)
}

// dispatch sends request base+i at offsets[i] from now, the first nWarm of them as warm-up.
func dispatch(ctx context.Context, s subject.Subject, c load.Config, offsets []time.Duration, nWarm int, ss *servingSink, base int) error {
	callCtx := ctx // interrupt.go: an interrupted run cuts its requests in flight
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	var slots chan struct{}
	if c.MaxConcurrency > 0 {
		slots = make(chan struct{}, c.MaxConcurrency)
	}
	drop := c.Overflow == "drop"
	var wg sync.WaitGroup
	defer wg.Wait()
	if nWarm > 0 {
		ss.Begin(load.Warmup)
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	// Start a little ahead so the first requests are not late for the setup.
	t0 := time.Now().Add(time.Millisecond)
	// freed is when the dispatcher last got a slot after waiting for one: a request due before
	// then was due while the cap was reached, so it is late even when a slot is free by the time
	// the dispatcher reaches it.
	var freed time.Time
	for i, off := range offsets {
		if ss.stop.Load() {
			break
		}
		if i == nWarm {
			ss.Begin(load.Measure)
		}
		phase := load.Measure
		if i < nWarm {
			phase = load.Warmup
		}
		due := t0.Add(off)
		if !precise.Until(ctx, timer, due) {
			return fatalCause(ctx)
		}
		if slots != nil {
			select {
			case slots <- struct{}{}:
				if phase == load.Measure && due.Before(freed) {
					ss.countLate()
				}
			default:
				if drop {
					if phase == load.Measure {
						ss.countDropped()
					}
					continue
				}
				if phase == load.Measure {
					ss.countLate()
				}
				select {
				case slots <- struct{}{}:
					freed = time.Now()
				case <-ctx.Done():
					return fatalCause(ctx)
				}
			}
		}
		wg.Add(1)
		go func(index int, due time.Time, phase load.Phase) {
			defer wg.Done()
			cctx, ccancel := context.WithTimeout(callCtx, c.IterationTimeout())
			o, err := s.Do(cctx, subject.Request{Index: index, Warmup: phase == load.Warmup, Scheduled: due})
			ccancel()
			if slots != nil {
				<-slots
			}
			if o.Scheduled.IsZero() {
				o.Scheduled = due
			}
			if interrupted(callCtx, err) {
				return
			}
			ss.Observe(phase, o, err)
			if err != nil && isFatal(err) {
				cancel(err)
			}
		}(base+i, due, phase)
	}
	wg.Wait()
	return fatalCause(ctx)
}

// fatalCause returns the fatal error that cancelled ctx, or nil for an interruption.
func fatalCause(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil && isFatal(err) {
		return err
	}
	return nil
}
