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

// validate reports a ramp that cannot run.
func (r *RampConfig) validate() error {
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

// cumulative returns Λ(t), the expected requests sent by t seconds into a ramp of d seconds.
func (r *RampConfig) cumulative(t, d float64) float64 {
	a, b := r.Start, r.End
	if r.Strategy == "exponential" && a != b {
		k := math.Log(b / a)
		return a * d / k * (math.Exp(k*t/d) - 1)
	}
	return a*t + (b-a)*t*t/(2*d)
}

// at returns the time in seconds into a ramp of d seconds by which u requests are expected: the
// inverse of cumulative.
func (r *RampConfig) at(u, d float64) float64 {
	a, b := r.Start, r.End
	switch {
	case a == b:
		return u / a
	case r.Strategy == "exponential":
		k := math.Log(b / a)
		return d / k * math.Log1p(u*k/(a*d))
	}
	slope := (b - a) / d
	return (math.Sqrt(a*a+2*slope*u) - a) / slope
}

// length returns the ramp's length in seconds for n requests.
func (r *RampConfig) length(n int) float64 {
	a, b := r.Start, r.End
	switch {
	case a == b:
		return float64(n) / a
	case r.Strategy == "exponential":
		k := math.Log(b / a)
		return float64(n) * k / (a * (b/a - 1))
	}
	return 2 * float64(n) / (a + b)
}
