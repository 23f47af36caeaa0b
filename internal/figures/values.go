package figures

// Tainted are the metrics a client_bound scenario marks with TaintNote: the figures the client's
// own limits may have set.
var Tainted = []string{"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "ttft_sched_ms", "e2e_sched_ms", "latency_ms",
	"requests_per_s", "output_tokens_per_s", "throughput_ips", "iterations_per_s", "goodput_rps", "steady_requests_per_s"}

// TaintNote is the note of a Tainted metric in a client_bound scenario.
const TaintNote = "client_bound: the client's own limits may have set this figure (see the scenario's warnings)"

// CoalescedWarning is the fraction of first tokens (or of inter-token gaps) that the client read
// together with the next event although the server sent them apart (or, when the server does not
// say, at all) above which the scenario is warned.
const CoalescedWarning = 0.01

// Per-request values a subject may report (subject.Observation.Values) about the client's own
// delays and, where the server says, what the server sent together. The delays become metrics of
// the scenario; the server's figures are read by the serving loads and removed.
const (
	// ValueSendDelay is the time from the call to the request's last byte leaving, in ms.
	ValueSendDelay = "send_delay_ms"
	// ValueReadDelay is the longest time from the kernel receiving response bytes to the
	// client reading them, in ms.
	ValueReadDelay = "read_delay_ms"
	// ValueServerTogether is the number of content events the server wrote in one write with
	// the event before them.
	ValueServerTogether = "server_events_together"
	// ValueServerFirstTogether is 1 when the server wrote the first two content events in one
	// write, else 0.
	ValueServerFirstTogether = "server_first_together"
	// ValueOutputShort is 1 when a request asked for a number of output tokens and the server
	// stopped before it, else 0 (absent when none was asked). Serving loads count them
	// (output_short_rate) and remove it.
	ValueOutputShort = "output_short"
	// ValueUsageMismatch is 1 when the server reported usage.completion_tokens that disagrees
	// with what it streamed (fewer tokens than content events, or more than max_tokens), else 0
	// (absent without usage). Serving loads count them (usage_mismatch_rate) and remove it.
	ValueUsageMismatch = "usage_mismatch"
)

// ValueTurn is the turn of a measured request of mode sessions in its session, counting from 0:
// the sessions driver puts it in the request's values and Figures.Observe takes it out, adding
// the request's TTFT and end-to-end latency to its turn's window as well (Figures.Turns).
const ValueTurn = "session_turn"
