package drive

import (
	"math"

	"github.com/inferbench/inferbench/load"
)

// rampCumulative returns Λ(t), the expected requests sent by t seconds into a ramp of d seconds.
func rampCumulative(r *load.RampConfig, t, d float64) float64 {
	a, b := r.Start, r.End
	if r.Strategy == "exponential" && a != b {
		k := math.Log(b / a)
		return a * d / k * (math.Exp(k*t/d) - 1)
	}
	return a*t + (b-a)*t*t/(2*d)
}

// rampAt returns the time in seconds into a ramp of d seconds by which u requests are expected: the
// inverse of cumulative.
func rampAt(r *load.RampConfig, u, d float64) float64 {
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

// rampLength returns the ramp's length in seconds for n requests.
func rampLength(r *load.RampConfig, n int) float64 {
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
