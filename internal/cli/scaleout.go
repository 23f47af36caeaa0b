package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/run"
)

// scaleoutFlags are `inferbench run --shard i/n` (a part of the suite) and `--agents N --agent i`
// (a part of the load), with the group the parts share; they become run.Scaleout.
type scaleoutFlags run.ScaleoutFlags

func (s *scaleoutFlags) register(f *pflag.FlagSet) {
	f.StringVar(&s.Shard, "shard", "", "run one shard of the selected scenarios: INDEX/COUNT, 0-based (--shard 3/8), or auto from JOB_COMPLETION_INDEX+JOB_COMPLETIONS (Kubernetes), SLURM_ARRAY_TASK_ID+SLURM_ARRAY_TASK_COUNT (Slurm) or INFERBENCH_SHARD")
	f.StringVar(&s.ShardCosts, "shard-costs", "", "with --shard: balance shards by the scenario durations of this run (run.json, run folder, run id or baseline:NAME); the same in every shard. Default: by count")
	f.StringVar(&s.Group, "group", "", "run group the shards or agents share, for 'inferbench merge --group' (default $INFERBENCH_GROUP, else the Slurm array job or GitHub Actions run)")
	f.IntVar(&s.Agents, "agents", 0, "load the server from this many agents together: this one sends 1/N of --rate, --concurrency and --requests")
	f.StringVar(&s.Agent, "agent", "", "with --agents: this agent's 0-based index, or auto (as --shard auto)")
	f.StringVar(&s.StartAt, "start-at", "", "with --agents: wall-clock time to start the load, RFC 3339 (2026-11-22T18:00:00Z) or Unix seconds, the same for every agent; or barrier: meet the other agents in the shared store (--store) and start together")
	f.DurationVar(&s.BarrierTimeout, "barrier-timeout", 10*time.Minute, "with --start-at barrier: how long to wait for the other agents")
}
