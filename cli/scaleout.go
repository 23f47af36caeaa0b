package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/shard"
)

// scaleoutFlags are `inferbench run --shard i/n` (a part of the suite) and `--agents N --agent i`
// (a part of the load), with the group the parts share; they become run.Scaleout.
type scaleoutFlags struct {
	shard      string
	shardCosts string
	group      string
	agents     int
	agent      string
	startAt    string
	barrierTO  time.Duration
}

func (s *scaleoutFlags) register(f *pflag.FlagSet) {
	f.StringVar(&s.shard, "shard", "", "run one shard of the selected scenarios: INDEX/COUNT, 0-based (--shard 3/8), or auto from JOB_COMPLETION_INDEX+JOB_COMPLETIONS (Kubernetes), SLURM_ARRAY_TASK_ID+SLURM_ARRAY_TASK_COUNT (Slurm) or INFERBENCH_SHARD")
	f.StringVar(&s.shardCosts, "shard-costs", "", "with --shard: balance shards by the scenario durations of this run (run.json, run folder, run id or baseline:NAME); the same in every shard. Default: by count")
	f.StringVar(&s.group, "group", "", "run group the shards or agents share, for 'inferbench merge --group' (default $INFERBENCH_GROUP, else the Slurm array job or GitHub Actions run)")
	f.IntVar(&s.agents, "agents", 0, "load the server from this many agents together: this one sends 1/N of --rate, --concurrency and --requests")
	f.StringVar(&s.agent, "agent", "", "with --agents: this agent's 0-based index, or auto (as --shard auto)")
	f.StringVar(&s.startAt, "start-at", "", "with --agents: wall-clock time to start the load, RFC 3339 (2026-11-22T18:00:00Z) or Unix seconds, the same for every agent; or barrier: meet the other agents in the shared store (--store) and start together")
	f.DurationVar(&s.barrierTO, "barrier-timeout", 10*time.Minute, "with --start-at barrier: how long to wait for the other agents")
}

// options turns the flags into run.Scaleout.
func (s *scaleoutFlags) options(o *IO) (run.Scaleout, error) {
	var so run.Scaleout
	if s.shard == "" && s.agents == 0 && s.agent == "" && s.startAt == "" {
		if s.shardCosts != "" {
			return so, usageErr("--shard-costs needs --shard")
		}
		return so, nil
	}
	so.Group = s.group
	if so.Group == "" {
		so.Group = shard.GroupFromEnv(o.LookupEnv)
	}
	if s.shard != "" {
		spec, err := shard.Parse(s.shard, o.LookupEnv)
		if err != nil {
			return so, usageErr("--shard: %v", err)
		}
		so.Shard, so.ShardCosts = &spec, s.shardCosts
	} else if s.shardCosts != "" {
		return so, usageErr("--shard-costs needs --shard")
	}
	if s.agents == 0 && (s.agent != "" || s.startAt != "") {
		return so, usageErr("--agent and --start-at need --agents N (the number of agents loading the server together)")
	}
	if s.agents < 0 {
		return so, usageErr("--agents %d: want 1 or more", s.agents)
	}
	if s.agents > 0 {
		so.Agents = s.agents
		switch s.agent {
		case "":
			if s.agents > 1 {
				return so, usageErr("--agents %d: give this agent's index with --agent (0 to %d) or --agent auto", s.agents, s.agents-1)
			}
		case "auto":
			spec, err := shard.FromEnv(o.LookupEnv)
			if err != nil {
				return so, usageErr("--agent auto: %v", err)
			}
			if spec.Count != s.agents {
				return so, usageErr("--agent auto: the environment says %d agents, --agents %d", spec.Count, s.agents)
			}
			so.Agent = spec.Index
		default:
			n, err := strconv.Atoi(s.agent)
			if err != nil || n < 0 || n >= s.agents {
				return so, usageErr("--agent %q: want 0 to %d (0-based) or auto", s.agent, s.agents-1)
			}
			so.Agent = n
		}
		switch s.startAt {
		case "":
		case "barrier":
			so.Barrier, so.BarrierTimeout = true, s.barrierTO
		default:
			at, err := parseStartAt(s.startAt)
			if err != nil {
				return so, usageErr("--start-at %q: %v", s.startAt, err)
			}
			so.StartAt = at
		}
	}
	if so.Group == "" {
		return so, usageErr("--shard and --agents need a run group: pass --group NAME (the same in every part), or set %s", shard.EnvGroup)
	}
	return so, nil
}

// parseStartAt reads RFC 3339 or Unix seconds (with a fraction).
func parseStartAt(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 {
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e9)), nil
	}
	return time.Time{}, fmt.Errorf("want RFC 3339 (2026-11-22T18:00:00Z), Unix seconds or barrier")
}
