package load

import (
	"fmt"

	"github.com/inferbench/inferbench/internal/capacity"
)

// ModeCapacity searches open-loop rates for the highest whose SLOs hold, with a lower bound
// that covers it (docs/capacity.md).
const ModeCapacity = "capacity"

// CapacityConfig configures mode capacity (`load.capacity:`). Zero fields take the defaults
// docs/capacity.md lists.
type CapacityConfig struct {
	// Start is the first rate tried, in requests per second; 0 runs a throughput step first
	// (every request at once, max_concurrency in flight) and starts at half its rate.
	Start float64 `yaml:"start" json:"start,omitempty"`
	// Attainment, in (0, 1), judges the SLOs together as goodput does: that fraction of requests
	// must meet every limit. 0 judges each SLO by its percentile (ttft_ms.p99: 99% of requests).
	Attainment float64 `yaml:"attainment" json:"attainment,omitempty"`
	// MinRequests and MaxRequests are a step's measured requests at its first look and at most
	// (defaults: 200, or 20 / (1 - target); 8 × MinRequests, at least 3,200).
	MinRequests int `yaml:"min_requests" json:"min_requests,omitempty"`
	MaxRequests int `yaml:"max_requests" json:"max_requests,omitempty"`
	// WarmupRequests are sent unmeasured at the start of every step (default MinRequests / 4).
	WarmupRequests int `yaml:"warmup_requests" json:"warmup_requests,omitempty"`
	// MaxSteps bounds the steps (default 12); Tolerance is the bracket's width, as a fraction of
	// the rate, at which the search stops (default 0.03).
	MaxSteps  int     `yaml:"max_steps" json:"max_steps,omitempty"`
	Tolerance float64 `yaml:"tolerance" json:"tolerance,omitempty"`
}

// Validate reports a capacity configuration that cannot run.
func (cc *CapacityConfig) Validate(slos map[string]float64) error {
	var a float64
	if cc != nil {
		if cc.Start < 0 || cc.MinRequests < 0 || cc.MaxRequests < 0 || cc.WarmupRequests < 0 || cc.MaxSteps < 0 || cc.Tolerance < 0 || cc.Tolerance >= 1 {
			return fmt.Errorf("capacity: start, min_requests, max_requests, warmup_requests, max_steps must not be negative and tolerance must be in [0, 1)")
		}
		a = cc.Attainment
	}
	// Without SLOs here they may come from elsewhere: the command line's override of a
	// definition's load is checked alone. The search refuses to start without any.
	if len(slos) == 0 {
		return nil
	}
	if _, err := capacity.Objectives(slos, a); err != nil {
		return fmt.Errorf("mode capacity: %w", err)
	}
	return nil
}

// ServerFailingError ends a capacity search whose step at Rate had every request fail, or nearly
// every one (at most 1% succeeded): the server (Server, its URL where the subject says it) is
// gone or fails every request, and a search that read the failures as overload would halve the
// rate and send on. The steps are kept; no capacity is.
type ServerFailingError struct {
	Rate          float64
	Server        string // "" when the subject names none
	Failed, Ended int    // the step's failed calls, of those that ended (warm-up included)
	Kinds         string // the failures by kind: "http_500 ×20"
	First         string // the first failure's error
	Refused       bool   // the last were connections refused in a row: the server is gone
}

// Error says which server failed at which rate, how, and what to check.
func (e *ServerFailingError) Error() string {
	name, what := "the server", "fails every request"
	if e.Server != "" {
		name += " at " + e.Server
	}
	if e.Refused {
		what = "is gone (connections refused)"
	}
	return fmt.Sprintf("capacity: %s %s: %d of the %d requests of the step at %.4g req/s failed (%s; first: %s), "+
		"so the search stopped without a capacity; check that the server runs and answers (inferbench run --openai URL --requests 1)",
		name, what, e.Failed, e.Ended, e.Rate, e.Kinds, e.First)
}
