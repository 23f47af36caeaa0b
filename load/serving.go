package load

import (
	"fmt"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/subject"
)

// Serving modes.
const (
	ModeConcurrency = "concurrency" // closed loop: Concurrency requests in flight
	ModeRate        = "rate"        // open loop: requests sent on a seeded arrival schedule
	ModeSweep       = "sweep"       // synchronous, maximum throughput, then rates between
	ModeOffline     = "offline"     // every request at once, up to MaxConcurrency in flight
)

// SweepConfig configures mode sweep. Every step sends measurement_iterations requests (or runs
// for duration).
type SweepConfig struct {
	// Steps is the number of rates tried between the synchronous and the maximum rate (default 4).
	Steps int `yaml:"steps" json:"steps,omitempty"`
	// Search, with SLOs, bisects between those rates this many times for the highest rate whose
	// SLOs hold (default 0: no search).
	Search int `yaml:"search" json:"search,omitempty"`
}

// Reporter is an optional ability of a Sink: serving drivers report figures about the load itself
// (goodput, schedule lag, the client's CPU, sweep steps) that no single call carries.
type Reporter interface {
	// Value records a scenario-level metric, such as "goodput_rps".
	Value(name string, v float64)
	// Extra records a section of the scenario's result by its name in run.json, such as
	// result.SectionSweep with []result.SweepStep (result.Extra.Set takes it).
	Extra(section string, v any)
	// Warn adds a warning to the scenario.
	Warn(msg string)
}

func (c Config) validateServing() error {
	switch c.Arrival {
	case "", "poisson", "constant", "gamma":
	default:
		return fmt.Errorf("arrival %q: want poisson, constant or gamma", c.Arrival)
	}
	switch c.Overflow {
	case "", "wait", "drop":
	default:
		return fmt.Errorf("overflow %q: want wait or drop", c.Overflow)
	}
	if c.Concurrency < 0 || c.MaxConcurrency < 0 || c.Rate < 0 || c.Burstiness < 0 || c.Duration < 0 || c.WarmupTime < 0 || c.RampUp < 0 {
		return fmt.Errorf("concurrency, max_concurrency, rate, burstiness, duration, warmup_time and ramp_up must not be negative")
	}
	if c.Arrival == "gamma" && c.Burstiness == 0 {
		return fmt.Errorf("arrival gamma needs burstiness (the shape: 1 is poisson, below 1 burstier)")
	}
	if c.Sweep != nil && (c.Sweep.Steps < 0 || c.Sweep.Search < 0) {
		return fmt.Errorf("sweep steps and search must not be negative")
	}
	if c.Speedup < 0 || c.Speedup != c.Speedup {
		return fmt.Errorf("speedup %v: want a factor above 0 (mode trace)", c.Speedup)
	}
	if c.RateRamp != nil {
		if c.mode() != ModeRate {
			return fmt.Errorf("rate_ramp is for mode rate, not %s", c.mode())
		}
		if err := c.RateRamp.Validate(); err != nil {
			return err
		}
	}
	if _, err := figures.ParseSLOs(c.SLO); err != nil {
		return err
	}
	if c.mode() == ModeCapacity {
		return c.Capacity.Validate(c.SLO)
	}
	return nil
}

// WithParams returns c with the load settings a scenario's parameters name: "concurrency",
// "rate" and "max_concurrency". A matrix axis over them sweeps the load, one scenario per value:
// matrix: {concurrency: [1, 8, 64]}.
func (c Config) WithParams(p map[string]any) Config {
	ps := subject.Params(p)
	c.Concurrency = ps.Int("concurrency", c.Concurrency)
	c.Rate = ps.Float("rate", c.Rate)
	c.MaxConcurrency = ps.Int("max_concurrency", c.MaxConcurrency)
	return c
}
