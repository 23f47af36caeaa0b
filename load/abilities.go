package load

import "time"

// Turner is an optional ability of a subject whose workload makes multi-turn sessions: request
// i is turn i mod Turns() of session i / Turns() (the openai subject with workload.turns).
type Turner interface {
	Turns() int
}

// Arrivals is an optional ability of a subject whose workload is a timestamped trace: when each
// request is due, from the first, in request order (the openai subject with workload format
// trace, mooncake or azure).
type Arrivals interface {
	Arrivals() []time.Duration
}

// ModeSessions runs multi-turn conversations.
const ModeSessions = "sessions"

// ModeTrace replays a timestamped trace: each request at its time.
const ModeTrace = "trace"
