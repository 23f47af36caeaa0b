// Package load configures how a run calls a subject: a definition's `load:` block (Config), its
// mode (single: warm-up then measured iterations, one at a time; for serving loads concurrency,
// rate, sweep, offline, capacity, sessions and trace) and the seams of the drivers that make the
// calls: a Driver reports every call to a Sink and never computes statistics itself, and a
// program may add a mode of its own (RegisterDriver). The built-in drivers come with package run.
package load

import (
	"fmt"
	"reflect"
	"time"
)

// Modes.
const (
	ModeSingle = "single"
)

// Config is the `load:` block of a definition. Zero fields take the defaults of Defaults.
type Config struct {
	// Mode picks the driver: "single" (default).
	Mode string `yaml:"mode" json:"mode,omitempty"`
	// WarmupIterations are run first and not measured.
	WarmupIterations *int `yaml:"warmup_iterations" json:"warmup_iterations,omitempty"`
	// MeasurementIterations is the number of measured iterations (at least; see MinTime).
	MeasurementIterations *int `yaml:"measurement_iterations" json:"measurement_iterations,omitempty"`
	// MinTime keeps measuring past MeasurementIterations until this much time has passed.
	MinTime time.Duration `yaml:"min_time" json:"min_time,omitempty"`
	// MaxTime stops measuring once this much time has passed, even short of the iterations.
	MaxTime time.Duration `yaml:"max_time" json:"max_time,omitempty"`
	// Timeout bounds one iteration.
	Timeout time.Duration `yaml:"timeout" json:"timeout,omitempty"`
	// MaxErrorRate is the share of measured calls that may fail before the scenario counts as
	// failed (default 0: any failure fails it).
	MaxErrorRate float64 `yaml:"max_error_rate" json:"max_error_rate,omitempty"`

	// Serving loads (modes concurrency, rate, sweep, offline; serving.go and docs/metrics.md).

	// Concurrency is the number of requests kept in flight by the closed loop (mode concurrency;
	// the sweep's maximum-throughput step).
	Concurrency int `yaml:"concurrency" json:"concurrency,omitempty"`
	// RampUp spreads the closed loop's start (modes concurrency, offline, the sweep's
	// maximum-throughput step): worker k of n sends its first request k/n of RampUp late, so the
	// server does not receive all of them at once.
	RampUp time.Duration `yaml:"ramp_up" json:"ramp_up,omitempty"`
	// Rate is the open loop's target in requests per second (mode rate).
	Rate float64 `yaml:"rate" json:"rate,omitempty"`
	// Arrival is the open loop's arrival process: poisson (default), constant, or gamma.
	Arrival string `yaml:"arrival" json:"arrival,omitempty"`
	// Burstiness is the gamma process's shape: 1 is poisson, below 1 burstier, above smoother.
	Burstiness float64 `yaml:"burstiness" json:"burstiness,omitempty"`
	// MaxConcurrency caps the requests in flight in open loops and offline (0: no cap in rate,
	// 1024 offline). A request due while the cap is reached waits (late) or, with overflow
	// drop, is not sent (dropped).
	MaxConcurrency int    `yaml:"max_concurrency" json:"max_concurrency,omitempty"`
	Overflow       string `yaml:"overflow" json:"overflow,omitempty"`
	// RateRamp makes the open loop's rate change over the measured requests, from its start
	// rate to its end rate (mode rate; rate is then not needed).
	RateRamp *RampConfig `yaml:"rate_ramp" json:"rate_ramp,omitempty"`
	// ThinkTime is the pause between an answer's end and the session's next turn (mode
	// sessions), as a user reading it.
	ThinkTime time.Duration `yaml:"think_time" json:"think_time,omitempty"`
	// Slice is the length of the time slices of a serving load's measured phase whose
	// percentiles are reported (extra.slices; default 10s, negative: none).
	Slice time.Duration `yaml:"slice" json:"slice,omitempty"`
	// Speedup divides the times of a replayed trace (mode trace): 2 sends it twice as fast.
	Speedup float64 `yaml:"speedup" json:"speedup,omitempty"`
	// Duration is how long an open loop sends measured requests; without it the loop sends
	// measurement_iterations requests.
	Duration time.Duration `yaml:"duration" json:"duration,omitempty"`
	// WarmupTime sends warm-up requests for this long before measuring (open loop), instead of
	// warmup_iterations.
	WarmupTime time.Duration `yaml:"warmup_time" json:"warmup_time,omitempty"`
	// Seed fixes the arrival schedule.
	Seed uint64 `yaml:"seed" json:"seed,omitempty"`
	// SLO holds service-level objectives by metric and percentile, "ttft_ms.p99": 500. A request
	// meeting every objective counts toward goodput; a scenario holds its SLOs when each
	// percentile is within its limit.
	SLO map[string]float64 `yaml:"slo" json:"slo,omitempty"`
	// Sweep configures mode sweep.
	Sweep *SweepConfig `yaml:"sweep" json:"sweep,omitempty"`
	// Capacity configures mode capacity.
	Capacity *CapacityConfig `yaml:"capacity" json:"capacity,omitempty"`
}

// Defaults for a definition that does not say.
const (
	defaultWarmup      = 3
	defaultMeasurement = 30
	defaultTimeout     = 5 * time.Minute
)

// Merge returns c with the fields set in o replacing its own (o wins).
func (c Config) Merge(o Config) Config {
	cv, ov := reflect.ValueOf(&c).Elem(), reflect.ValueOf(o)
	for i := range ov.NumField() {
		if f := ov.Field(i); !f.IsZero() {
			cv.Field(i).Set(f)
		}
	}
	return c
}

// Warmup returns the number of warm-up iterations: by default 3, or the concurrency when it is
// larger, so that every slot of a closed loop has opened its connection (or process) and made a
// call before the measured ones. With fewer, the measured phase began with the other slots'
// first calls at once: at 512 streams half of the first 512 requests read their first token
// together with the next (ttft_coalesced_rate), the client busy dialing and sending.
func (c Config) Warmup() int {
	if c.WarmupIterations == nil {
		return max(defaultWarmup, c.Concurrency)
	}
	return *c.WarmupIterations
}

// Measurement returns the number of measured iterations.
func (c Config) Measurement() int {
	if c.MeasurementIterations == nil {
		return defaultMeasurement
	}
	return *c.MeasurementIterations
}

// IterationTimeout returns the per-iteration timeout.
func (c Config) IterationTimeout() time.Duration {
	if c.Timeout <= 0 {
		return defaultTimeout
	}
	return c.Timeout
}

// Validate reports a configuration that cannot run.
func (c Config) Validate() error {
	if !knownMode(c.mode()) {
		return fmt.Errorf("unknown load mode %q (known: %v)", c.Mode, modeNames())
	}
	if c.Warmup() < 0 {
		return fmt.Errorf("warmup_iterations %d is negative", c.Warmup())
	}
	if c.Measurement() < 1 && c.MinTime <= 0 {
		return fmt.Errorf("measurement_iterations %d: need at least 1 (or a min_time)", c.Measurement())
	}
	if !(c.MaxErrorRate >= 0 && c.MaxErrorRate <= 1) { // NaN too
		return fmt.Errorf("max_error_rate %v is outside [0, 1]", c.MaxErrorRate)
	}
	for _, d := range []struct {
		key string
		d   time.Duration
	}{{"min_time", c.MinTime}, {"max_time", c.MaxTime}, {"timeout", c.Timeout}, {"ramp_up", c.RampUp}, {"duration", c.Duration}, {"warmup_time", c.WarmupTime}, {"think_time", c.ThinkTime}} {
		if d.d < 0 {
			return fmt.Errorf("%s %v is negative", d.key, d.d)
		}
	}
	if c.MaxTime > 0 && c.MinTime > c.MaxTime {
		return fmt.Errorf("min_time %v exceeds max_time %v", c.MinTime, c.MaxTime)
	}
	return c.validateServing()
}

// Serving reports whether the load is a serving load (concurrency, rate, sweep, offline): many
// requests, possibly at once, rather than one iteration after another.
func (c Config) Serving() bool { return c.mode() != ModeSingle }

func (c Config) mode() string {
	if c.Mode == "" {
		return ModeSingle
	}
	return c.Mode
}
