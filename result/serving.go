package result

// Metrics of serving loads (docs/metrics.md, "Serving"), reported by the load drivers.
func init() {
	Define(
		Info{"ttft_sched_ms", "ms", Lower, "time to first token from the scheduled send (open loop): free of coordinated omission"},
		Info{"e2e_sched_ms", "ms", Lower, "end-to-end latency from the scheduled send (open loop)"},
		Info{"schedule_lag_ms", "ms", Lower, "actual send minus scheduled send of each open-loop request: the client's own delay"},
		Info{"goodput_rps", "1/s", Higher, "requests meeting every SLO per second of measured wall time"},
		Info{"client_cpu_cores", "cores", Lower, "CPU time the client process used per second of measurement"},
		Info{"late_requests", "requests", Lower, "open-loop requests that waited for a slot under max_concurrency"},
		Info{"dropped_requests", "requests", Lower, "open-loop requests not sent because max_concurrency was reached (overflow drop)"},
		Info{"steady_requests_per_s", "1/s", Higher, "completed requests per second from the start of measurement until the closed loop began to drain"},
		Info{"max_rps", "1/s", Higher, "sweep: completed requests per second of the throughput step"},
		Info{"synchronous_rps", "1/s", Higher, "sweep: completed requests per second of the synchronous step"},
		Info{"slo_max_rps", "1/s", Higher, "sweep: highest rate found whose SLOs hold (0 when none did)"},
	)
}
