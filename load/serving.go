package load

import (
	"fmt"
	"time"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// Serving modes.
const (
	ModeConcurrency = "concurrency" // closed loop: Concurrency requests in flight
	ModeRate        = "rate"        // open loop: requests sent on a seeded arrival schedule
	ModeSweep       = "sweep"       // synchronous, maximum throughput, then rates between
	ModeOffline     = "offline"     // every request at once, up to MaxConcurrency in flight
)

func init() {
	RegisterDriver(ModeConcurrency, driveClosedLoop)
	RegisterDriver(ModeRate, driveOpenLoop)
	RegisterDriver(ModeSweep, driveSweep)
	RegisterDriver(ModeOffline, driveOffline)
}

// SweepConfig configures mode sweep. Every step sends measurement_iterations requests (or runs
// for duration).
type SweepConfig struct {
	// Steps is the number of rates tried between the synchronous and the maximum rate (default 4).
	Steps int `yaml:"steps" json:"steps,omitempty"`
	// Search, with SLOs, bisects between those rates this many times for the highest rate whose
	// SLOs hold (default 0: no search).
	Search int `yaml:"search" json:"search,omitempty"`
}

// clientBoundLag is the p99 of the client's own lags that move a figure by themselves (an open
// loop's schedule and send delays, which the _sched figures include; event-loop stalls where
// arrivals are read times) above which a scenario is client_bound (servingSink.lagReasons).
const clientBoundLag = time.Millisecond

// shortWarning is the share of requests stopping short of their asked length above which the
// scenario is warned: their output lengths, and every per-token figure, are not the workload's.
const shortWarning = 0.01

func init() {
	result.Define(
		result.Info{Name: "itl_coalesced_rate", Unit: "ratio", Better: result.Lower, Doc: "inter-token gaps of zero because the two events arrived in one read, over all inter-token gaps"},
		result.Info{Name: "output_short_rate", Unit: "ratio", Better: result.Lower, Doc: "requests that stopped before the output tokens they asked for, over the requests that asked for a number"},
		result.Info{Name: figures.ValueOutputShort, Unit: "ratio", Better: result.Lower, Doc: "1 when a request stopped before the output tokens it asked for, else 0 (serving loads count them as output_short_rate)"},
		result.Info{Name: "usage_mismatch_rate", Unit: "ratio", Better: result.Lower, Doc: "requests whose usage.completion_tokens was below the content events streamed or above max_tokens, over the requests with usage"},
		result.Info{Name: figures.ValueUsageMismatch, Unit: "ratio", Better: result.Lower, Doc: "1 when a request's usage.completion_tokens disagreed with what the server streamed, else 0 (serving loads count them as usage_mismatch_rate)"},
		result.Info{Name: "client_stall_p99_ms", Unit: "ms", Better: result.Lower, Doc: "p99 of how late the client's event loop woke from a 5 ms sleep during the measured phase"},
		// Read by the serving loads and removed; a single-call load keeps them as metrics.
		result.Info{Name: figures.ValueServerFirstTogether, Unit: "ratio", Better: result.Lower, Doc: "mockserver: 1 when the server wrote a request's first two content events in one write, else 0 (its mean is the server's share)"},
		result.Info{Name: figures.ValueServerTogether, Unit: "events", Better: result.Lower, Doc: "mockserver: content events of a request the server wrote in one write with the event before them"},
	)
}

// defaultOfflineConcurrency caps the requests in flight in mode offline.
const defaultOfflineConcurrency = 1024

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
		if err := c.RateRamp.validate(); err != nil {
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
