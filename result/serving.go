package result

// Metrics of serving loads (docs/metrics.md, "Serving"), reported by the load drivers.
func init() {
	Define(
		Info{Name: "ttft_sched_ms", Unit: "ms", Better: Lower, Doc: "time to first token from the scheduled send (open loop): free of coordinated omission"},
		Info{Name: "e2e_sched_ms", Unit: "ms", Better: Lower, Doc: "end-to-end latency from the scheduled send (open loop)"},
		Info{Name: "schedule_lag_ms", Unit: "ms", Better: Lower, Doc: "actual send minus scheduled send of each open-loop request: the client's own delay"},
		Info{Name: "goodput_rps", Unit: "1/s", Better: Higher, Doc: "requests meeting every SLO per second of measured wall time"},
		Info{Name: "client_cpu_cores", Unit: "cores", Better: Lower, Doc: "CPU time the client process used per second of measurement"},
		Info{Name: "late_requests", Unit: "requests", Better: Lower, Doc: "open-loop requests that waited for a slot under max_concurrency"},
		Info{Name: "dropped_requests", Unit: "requests", Better: Lower, Doc: "open-loop requests not sent because max_concurrency was reached (overflow drop)"},
		Info{Name: "steady_requests_per_s", Unit: "1/s", Better: Higher, Doc: "completed requests per second from the start of measurement until the closed loop began to drain"},
		Info{Name: "max_rps", Unit: "1/s", Better: Higher, Doc: "sweep: completed requests per second of the throughput step"},
		Info{Name: "synchronous_rps", Unit: "1/s", Better: Higher, Doc: "sweep: completed requests per second of the synchronous step"},
		Info{Name: "slo_max_rps", Unit: "1/s", Better: Higher, Doc: "sweep: highest rate found whose SLOs hold (0 when none did)"},
	)
}
