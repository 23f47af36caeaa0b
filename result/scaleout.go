package result

import "time"

// ShardInfo marks a run as one shard of a group (inferbench run --shard i/n).
type ShardInfo struct {
	Group string `json:"group"`
	Index int    `json:"index"`
	Count int    `json:"count"`
	// Planned is the number of scenarios selected across the group; Assigned those this shard ran.
	Planned  int `json:"planned"`
	Assigned int `json:"assigned"`
	// Balance is "count" or "cost"; CostsFrom the run the costs came from.
	Balance   string `json:"balance"`
	CostsFrom string `json:"costs_from,omitempty"`
	// Plan is a digest of the assignment: equal in every shard that planned the same selection
	// with the same costs.
	Plan string `json:"plan"`
}

// AgentInfo marks a run as one of several load agents against one server (inferbench run
// --agents N --agent i).
type AgentInfo struct {
	Group string `json:"group"`
	Index int    `json:"index"`
	Count int    `json:"count"`
	// StartAt is the agreed wall-clock start (--start-at or the store barrier); zero when none.
	StartAt time.Time `json:"start_at,omitzero"`
	// ClockOffsetMS is this agent's clock minus the reference clock (the store's), when measured.
	ClockOffsetMS *float64 `json:"clock_offset_ms,omitempty"`
}

// MergeInfo describes a run made by inferbench merge from the runs of a group.
type MergeInfo struct {
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"` // "shards" or "agents"
	Count int    `json:"count"`
	Parts []Part `json:"parts"`
	// Missing names the parts that were expected and not found or did not finish ("shard 3/8:
	// missing"); a merged run with any fails the gate unless AllowMissing.
	Missing      []string `json:"missing,omitempty"`
	AllowMissing bool     `json:"allow_missing,omitempty"`
	// Superseded lists runs of a part that a later, complete run of the same index replaced
	// (a retried pod).
	Superseded []string `json:"superseded,omitempty"`
}

// Part is one run merged into a MergeInfo.
type Part struct {
	Index     int       `json:"index"`
	RunID     string    `json:"run_id"`
	Status    string    `json:"status"` // "ok", "failed" (failed scenarios), "partial" (interrupted)
	Host      string    `json:"host,omitempty"`
	StartedAt time.Time `json:"started_at"`
	Scenarios int       `json:"scenarios"`
	Failed    int       `json:"failed"`
	// Environment is the part's sysinfo fingerprint.
	Environment map[string]any `json:"environment,omitempty"`
	Agent       *AgentInfo     `json:"agent,omitempty"`
	// Args is the part's own command line (its Config.Args): the merged run's Config is the
	// merge's.
	Args []string `json:"args,omitempty"`
}

// Window is a scenario's measured window and the counts measured in it, kept so that the rates
// of several agents can be recomputed over the union of their windows.
type Window struct {
	Start        time.Time `json:"start"`
	End          time.Time `json:"end"`
	OK           int       `json:"ok"`    // measured calls that succeeded
	Items        int       `json:"items"` // items they processed
	OutputTokens int       `json:"output_tokens"`
}

// Skew is how the agents of a merged scenario lined up.
type Skew struct {
	// StartSpreadMS is the latest agent's measured start minus the earliest's, by their clocks
	// (corrected by their clock offsets where measured).
	StartSpreadMS float64 `json:"start_spread_ms"`
	// EndSpreadMS is the same for the ends of the measured windows.
	EndSpreadMS float64 `json:"end_spread_ms"`
	// ClientBound lists the agents whose own figures say they limited the load.
	ClientBound []int       `json:"client_bound,omitempty"`
	Agents      []AgentSkew `json:"agents"`
}

// AgentSkew is one agent's part in a merged scenario.
type AgentSkew struct {
	Agent int    `json:"agent"`
	RunID string `json:"run_id"`
	Host  string `json:"host,omitempty"`
	// Start and End bound the agent's measured window, by its clock.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// StartLagMS is Start minus the agreed start (--start-at), when there was one.
	StartLagMS    *float64 `json:"start_lag_ms,omitempty"`
	ClockOffsetMS *float64 `json:"clock_offset_ms,omitempty"`
	Requests      int      `json:"requests"`
	Failed        int      `json:"failed"`
	RequestsPerS  float64  `json:"requests_per_s"`
	// ScheduleLagP99MS and ClientCPUCores are the agent's own client-side figures.
	ScheduleLagP99MS *float64 `json:"schedule_lag_p99_ms,omitempty"`
	ClientCPUCores   *float64 `json:"client_cpu_cores,omitempty"`
	ClientBound      bool     `json:"client_bound"`
}
