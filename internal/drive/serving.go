package drive

import (
	"time"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
)

func init() {
	load.RegisterDriver(load.ModeSingle, driveSingle)
	load.RegisterDriver(load.ModeConcurrency, driveClosedLoop)
	load.RegisterDriver(load.ModeRate, driveOpenLoop)
	load.RegisterDriver(load.ModeSweep, driveSweep)
	load.RegisterDriver(load.ModeOffline, driveOffline)
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
