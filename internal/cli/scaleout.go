package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/internal/stage/scaleout"
	"github.com/inferbench/inferbench/run"
)

// scaleoutFlags are `inferbench run --shard i/n` (a part of the suite) and `--agents N --agent i`
// (a part of the load), with the group the parts share, as the command line takes them, before
// they are checked and resolved against the environment into a run.Scaleout.
type scaleoutFlags struct {
	Shard          string // INDEX/COUNT or auto
	ShardCosts     string
	Group          string // "" reads the environment (scaleout.GroupFromEnv)
	Agents         int
	Agent          string // the 0-based index or auto
	StartAt        string // RFC 3339, Unix seconds or barrier
	BarrierTimeout time.Duration
}

func (s *scaleoutFlags) register(f *pflag.FlagSet) {
	f.StringVar(&s.Shard, "shard", "", "run one shard of the selected scenarios: INDEX/COUNT, 0-based (--shard 3/8), or auto from JOB_COMPLETION_INDEX+JOB_COMPLETIONS (Kubernetes), SLURM_ARRAY_TASK_ID+SLURM_ARRAY_TASK_COUNT (Slurm) or INFERBENCH_SHARD")
	f.StringVar(&s.ShardCosts, "shard-costs", "", "with --shard: balance shards by the scenario durations of this run (run.json, run folder, run id or baseline:NAME); the same in every shard. Default: by count")
	f.StringVar(&s.Group, "group", "", "run group the shards or agents share, for 'inferbench merge --group' (default $INFERBENCH_GROUP, else the Slurm array job or GitHub Actions run)")
	f.IntVar(&s.Agents, "agents", 0, "load the server from this many agents together: this one sends 1/N of --rate, --concurrency and --requests")
	f.StringVar(&s.Agent, "agent", "", "with --agents: this agent's 0-based index, or auto (as --shard auto)")
	f.StringVar(&s.StartAt, "start-at", "", "with --agents: wall-clock time to start the load, RFC 3339 (2026-11-22T18:00:00Z) or Unix seconds, the same for every agent; or barrier: meet the other agents in the shared store (--store) and start together")
	f.DurationVar(&s.BarrierTimeout, "barrier-timeout", 10*time.Minute, "with --start-at barrier: how long to wait for the other agents")
}

// scaleout checks the settings and turns them into a run.Scaleout; lookup reads the environment
// (the group and the index of --shard auto and --agent auto).
func (s scaleoutFlags) scaleout(lookup func(string) (string, bool)) (run.Scaleout, error) {
	var so run.Scaleout
	if s.Shard == "" && s.Agents == 0 && s.Agent == "" && s.StartAt == "" {
		if s.ShardCosts != "" {
			return so, usageErr("--shard-costs needs --shard")
		}
		return so, nil
	}
	so.Group = s.Group
	if so.Group == "" {
		so.Group = scaleout.GroupFromEnv(lookup)
	}
	if s.Shard != "" {
		spec, err := scaleout.Parse(s.Shard, lookup)
		if err != nil {
			return so, usageErr("--shard: %v", err)
		}
		so.Shard, so.ShardCosts = &run.Shard{Index: spec.Index, Count: spec.Count}, s.ShardCosts
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
			spec, err := scaleout.FromEnv(lookup)
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
