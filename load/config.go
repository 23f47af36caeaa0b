// Package load holds the drivers that call a subject on a schedule: single (warm-up then measured
// iterations, one at a time), and for serving loads concurrency, rate, sweep and offline. A driver
// reports every call to a Sink; it never computes statistics itself.
package load

import (
	"fmt"
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
}

// Defaults for a definition that does not say.
const (
	DefaultWarmup      = 3
	DefaultMeasurement = 30
	DefaultTimeout     = 5 * time.Minute
)

// Merge returns c with the fields set in o replacing its own (o wins).
func (c Config) Merge(o Config) Config {
	if o.Mode != "" {
		c.Mode = o.Mode
	}
	if o.WarmupIterations != nil {
		c.WarmupIterations = o.WarmupIterations
	}
	if o.MeasurementIterations != nil {
		c.MeasurementIterations = o.MeasurementIterations
	}
	if o.MinTime != 0 {
		c.MinTime = o.MinTime
	}
	if o.MaxTime != 0 {
		c.MaxTime = o.MaxTime
	}
	if o.Timeout != 0 {
		c.Timeout = o.Timeout
	}
	if o.MaxErrorRate != 0 {
		c.MaxErrorRate = o.MaxErrorRate
	}
	return c
}

// Warmup returns the number of warm-up iterations.
func (c Config) Warmup() int {
	if c.WarmupIterations == nil {
		return DefaultWarmup
	}
	return *c.WarmupIterations
}

// Measurement returns the number of measured iterations.
func (c Config) Measurement() int {
	if c.MeasurementIterations == nil {
		return DefaultMeasurement
	}
	return *c.MeasurementIterations
}

// IterationTimeout returns the per-iteration timeout.
func (c Config) IterationTimeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

// Validate reports a configuration that cannot run.
func (c Config) Validate() error {
	if _, ok := lookupDriver(c.mode()); !ok {
		return fmt.Errorf("unknown load mode %q (known: %v)", c.Mode, driverNames())
	}
	if c.Warmup() < 0 {
		return fmt.Errorf("warmup_iterations %d is negative", c.Warmup())
	}
	if c.Measurement() < 1 && c.MinTime <= 0 {
		return fmt.Errorf("measurement_iterations %d: need at least 1 (or a min_time)", c.Measurement())
	}
	if c.MaxErrorRate < 0 || c.MaxErrorRate > 1 {
		return fmt.Errorf("max_error_rate %v is outside [0, 1]", c.MaxErrorRate)
	}
	if c.MaxTime > 0 && c.MinTime > c.MaxTime {
		return fmt.Errorf("min_time %v exceeds max_time %v", c.MinTime, c.MaxTime)
	}
	return nil
}

func (c Config) mode() string {
	if c.Mode == "" {
		return ModeSingle
	}
	return c.Mode
}
