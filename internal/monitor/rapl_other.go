//go:build !linux

package monitor

import (
	"fmt"
	"runtime"
	"time"
)

// RAPLSampler reads CPU package energy from RAPL counters; they are exposed through sysfs on Linux
// only, so on this platform NewRAPLSampler always says "not available".
type RAPLSampler struct{}

var _ Sampler = (*RAPLSampler)(nil)

// NewRAPLSampler returns an error wrapping ErrNotAvailable: RAPL counters are read from Linux's
// powercap sysfs, which this platform does not have.
func NewRAPLSampler(root string) (*RAPLSampler, error) {
	return nil, fmt.Errorf("rapl: %w: energy counters are read from Linux powercap, not on %s", ErrNotAvailable, runtime.GOOS)
}

// Name implements Sampler.
func (s *RAPLSampler) Name() string { return "rapl" }

// Metrics implements Sampler.
func (s *RAPLSampler) Metrics() []Metric { return nil }

// Sample implements Sampler.
func (s *RAPLSampler) Sample(now time.Time, out []Value) ([]Value, error) { return out, nil }
