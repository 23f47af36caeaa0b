package run

import (
	"fmt"
	"strconv"
	"time"

	"github.com/inferbench/inferbench/internal/shard"
)

// ScaleoutFlags are the scale-out settings as the command line takes them (run --shard i/n, a
// part of the suite; --agents N --agent i, a part of the load; the group the parts share), before
// they are checked and resolved against the environment into a Scaleout.
type ScaleoutFlags struct {
	Shard          string // INDEX/COUNT or auto
	ShardCosts     string
	Group          string // "" reads the environment (shard.GroupFromEnv)
	Agents         int
	Agent          string // the 0-based index or auto
	StartAt        string // RFC 3339, Unix seconds or barrier
	BarrierTimeout time.Duration
}

// Scaleout checks the settings and turns them into a Scaleout; lookup reads the environment
// (the group and the index of --shard auto and --agent auto).
func (s ScaleoutFlags) Scaleout(lookup func(string) (string, bool)) (Scaleout, error) {
	var so Scaleout
	if s.Shard == "" && s.Agents == 0 && s.Agent == "" && s.StartAt == "" {
		if s.ShardCosts != "" {
			return so, usageErr("--shard-costs needs --shard")
		}
		return so, nil
	}
	so.Group = s.Group
	if so.Group == "" {
		so.Group = shard.GroupFromEnv(lookup)
	}
	if s.Shard != "" {
		spec, err := shard.Parse(s.Shard, lookup)
		if err != nil {
			return so, usageErr("--shard: %v", err)
		}
		so.Shard, so.ShardCosts = &spec, s.ShardCosts
	} else if s.ShardCosts != "" {
		return so, usageErr("--shard-costs needs --shard")
	}
	if s.Agents == 0 && (s.Agent != "" || s.StartAt != "") {
		return so, usageErr("--agent and --start-at need --agents N (the number of agents loading the server together)")
	}
	if s.Agents < 0 {
		return so, usageErr("--agents %d: want 1 or more", s.Agents)
	}
	if s.Agents > 0 {
		so.Agents = s.Agents
		switch s.Agent {
		case "":
			if s.Agents > 1 {
				return so, usageErr("--agents %d: give this agent's index with --agent (0 to %d) or --agent auto", s.Agents, s.Agents-1)
			}
		case "auto":
			spec, err := shard.FromEnv(lookup)
			if err != nil {
				return so, usageErr("--agent auto: %v", err)
			}
			if spec.Count != s.Agents {
				return so, usageErr("--agent auto: the environment says %d agents, --agents %d", spec.Count, s.Agents)
			}
			so.Agent = spec.Index
		default:
			n, err := strconv.Atoi(s.Agent)
			if err != nil || n < 0 || n >= s.Agents {
				return so, usageErr("--agent %q: want 0 to %d (0-based) or auto", s.Agent, s.Agents-1)
			}
			so.Agent = n
		}
		switch s.StartAt {
		case "":
		case "barrier":
			so.Barrier, so.BarrierTimeout = true, s.BarrierTimeout
		default:
			at, err := parseStartAt(s.StartAt)
			if err != nil {
				return so, usageErr("--start-at %q: %v", s.StartAt, err)
			}
			so.StartAt = at
		}
	}
	// A missing group is Scaleout.validate's error, when the run starts: a dry run needs none.
	return so, nil
}

// parseStartAt reads RFC 3339 or Unix seconds (with a fraction).
func parseStartAt(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && f < 1e12 { // not +Inf
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e9)), nil
	}
	return time.Time{}, fmt.Errorf("want RFC 3339 (2026-11-22T18:00:00Z), Unix seconds or barrier")
}
