package load

import (
	"fmt"
	"math"
)

// RampConfig is a request-rate ramp of an open loop: the rate goes from Start to End requests per
// second over the measured requests, linearly or exponentially (as vLLM's --ramp-up-strategy).
// Arrivals keep the loop's arrival process (poisson, constant or gamma), stretched in time to the
// ramp's rate. Warm-up requests go at Start.
type RampConfig struct {
	// Strategy is "linear" (the default) or "exponential".
	Strategy string `yaml:"strategy" json:"strategy,omitempty"`
	// Start and End are the rates in requests per second at the start and at the end of the
	// measured requests.
	Start float64 `yaml:"start" json:"start"`
	End   float64 `yaml:"end" json:"end"`
}

// Validate reports a ramp that cannot run.
func (r *RampConfig) Validate() error {
	switch r.Strategy {
	case "", "linear", "exponential":
	default:
		return fmt.Errorf("rate_ramp.strategy %q: want linear or exponential", r.Strategy)
	}
	if !(r.Start > 0) || !(r.End > 0) || math.IsInf(r.Start, 0) || math.IsInf(r.End, 0) {
		return fmt.Errorf("rate_ramp: start %v and end %v must be rates above 0", r.Start, r.End)
	}
	return nil
}
