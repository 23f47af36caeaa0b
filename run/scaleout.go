package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/internal/stage/recovery"
	"github.com/inferbench/inferbench/internal/stage/scaleout"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
	"github.com/inferbench/inferbench/suite"
)

// Scale-out: a run that is one part of a group on several machines (docs/scale-out.md). A shard
// runs its part of the selected scenarios; an agent sends its part of the load to a server that
// other agents load too (engine.Agent). Both record their part, and `inferbench merge` (package
// merge) makes one run of the group. The bookkeeping (the shard's plan, the agents' meeting at
// the store) is internal/stage/scaleout's.

// Scaleout makes a run one part of a group. The zero value is a whole run.
type Scaleout struct {
	// Group names the run group the parts share; required with Shard or Agents.
	Group string
	// Shard, when set, runs only that shard of the selected scenarios.
	Shard *Shard
	// ShardCosts balances the shards by the scenario durations of this run (a run.json, a run
	// folder, a run ID or baseline:NAME in the store); every shard must name the same.
	ShardCosts string
	// Agents > 0 makes the run agent Agent (0-based) of Agents loading one server together.
	Agents, Agent int
	// StartAt is the agreed wall-clock start of the load; with Barrier the agents agree on one
	// at the store's start barrier (waiting at most BarrierTimeout, 10 min when 0).
	StartAt        time.Time
	Barrier        bool
	BarrierTimeout time.Duration
}

// Shard is one shard of a group: Index (0-based) of Count.
type Shard struct{ Index, Count int }

func (s Scaleout) validate() error {
	if s.Shard == nil && s.Agents == 0 {
		if s.ShardCosts != "" {
			return exit.Usagef("--shard-costs needs --shard")
		}
		return nil
	}
	if s.Group == "" {
		return exit.Usagef("--shard and --agents need a run group: pass --group NAME (the same in every part), or set %s (derived from SLURM_ARRAY_JOB_ID, GITHUB_RUN_ID, or a Kubernetes Indexed Job's HOSTNAME)", scaleout.EnvGroup)
	}
	if strings.ContainsAny(s.Group, " \t\n/") {
		return exit.Usagef("--group %q: no spaces or slashes", s.Group)
	}
	if s.Shard != nil && s.Agents > 0 {
		return exit.Usagef("--shard and --agents: a run is one shard of a suite or one agent of a load, not both")
	}
	if s.Shard != nil {
		if err := scaleout.Spec(*s.Shard).Validate(); err != nil {
			return exit.Usagef("--shard: %v", err)
		}
	}
	if s.Agents > 0 && (s.Agent < 0 || s.Agent >= s.Agents) {
		return exit.Usagef("--agent %d: want 0 to %d (0-based)", s.Agent, s.Agents-1)
	}
	if !s.StartAt.IsZero() && time.Until(s.StartAt) > 24*time.Hour {
		return exit.Usagef("--start-at %s is more than a day away", s.StartAt.Format(time.RFC3339))
	}
	return nil
}

// selectShard returns the scenarios of o's shard of scenarios (all of them when o has no shard)
// and the shard's record. A shard may get none (more shards than scenarios): its run is empty.
func selectShard(ctx context.Context, o Options, scenarios []*suite.Scenario) ([]*suite.Scenario, *result.ShardInfo, error) {
	s := o.Scaleout
	if err := s.validate(); err != nil {
		return nil, nil, err
	}
	if s.Shard == nil {
		return scenarios, nil, nil
	}
	env := Env{Dir: o.Dir, Vars: o.Env}
	if env.Vars == nil {
		env.Vars = os.Environ()
	}
	var costs *result.Run
	if s.ShardCosts != "" {
		var err error
		if costs, err = loadRef(ctx, s.ShardCosts, o.Store, env); err != nil {
			return nil, nil, exit.Usagef("--shard-costs %s: %v", s.ShardCosts, err)
		}
	}
	out, info, err := scaleout.Shard(scenarios, scaleout.Spec(*s.Shard), s.Group, costs, s.ShardCosts)
	if err != nil {
		return nil, nil, exit.Usagef("--shard: %v", err)
	}
	return out, info, nil
}

// loadRef reads a run from a file or folder, else from the store (a run ID or baseline:NAME).
func loadRef(ctx context.Context, ref, storeLoc string, env Env) (*result.Run, error) {
	if _, err := os.Stat(env.Path(ref)); err == nil {
		return result.Load(env.Path(ref))
	}
	st, err := OpenStore(ctx, storeLoc, env)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return store.Resolve(ctx, st, ref)
}

// agentInfo is the run's record of its agent, nil for a whole run.
func (s Scaleout) agentInfo() *result.AgentInfo {
	if s.Agents == 0 {
		return nil
	}
	return &result.AgentInfo{Group: s.Group, Index: s.Agent, Count: s.Agents, StartAt: s.StartAt}
}

// meet opens the store and meets the other agents there (scaleout.Meet: the agent's clock offset
// and, with Barrier, the start they agree on at the store's start barrier). It updates a.
func (p *pipeline) meet(ctx context.Context, a *result.AgentInfo) error {
	s := p.o.Scaleout
	if a == nil || (p.o.NoStore && !s.Barrier) {
		return nil
	}
	st, err := OpenStore(ctx, p.o.Store, p.env)
	if err != nil {
		if s.Barrier {
			return fmt.Errorf("--start-at barrier: %w", err)
		}
		fmt.Fprintf(p.o.Stderr, "inferbench: clock offset not measured: %v\n", err)
		return nil
	}
	defer st.Close()
	err = scaleout.Meet(ctx, st, a, s.Barrier, s.BarrierTimeout, p.o.Stderr)
	if errors.Is(err, scaleout.ErrNoBarrier) {
		return exit.Usagef("--start-at barrier: the store %s has no barrier", recovery.StoreLabel(p.o.Store, p.env.Lookup, p.env.Dir))
	}
	return err
}

// startPart records the run's part of its group (shard, agent) and meets the other agents.
func (p *pipeline) startPart(ctx context.Context, w *writer, sh *result.ShardInfo) error {
	a := p.o.Scaleout.agentInfo()
	if err := p.meet(ctx, a); err != nil {
		return err
	}
	w.mu.Lock()
	w.run.Shard, w.run.Agent = sh, a
	w.mu.Unlock()
	if a != nil {
		p.engineOpts = append(p.engineOpts, engine.WithAgent(engine.Agent{Index: a.Index, Count: a.Count, StartAt: a.StartAt}))
	}
	return nil
}

// Made writes a run made elsewhere (`inferbench merge`'s pooled run of a group's agents) into a new folder under o.OutputDir, as Run
// writes its own (the run's ID is the folder's name; `latest` points at it), records it in the
// store, judges it against the baseline and budgets, and renders it: the run package is the one
// writer of run folders. It returns the folder ("" when none could be made). The error is Run's:
// ErrFailed, a *VerdictError, I/O errors.
func Made(ctx context.Context, o Options, r *result.Run) (string, error) {
	p, err := newPipeline(o)
	if err != nil {
		return "", err
	}
	root := Env{Dir: o.Dir, Vars: o.Env}.Path(o.OutputDir)
	dir, err := recovery.NewDir(root, time.Now())
	if err != nil {
		return "", err
	}
	r.ID = filepath.Base(dir)
	if err := result.Save(dir, r); err != nil {
		return dir, fmt.Errorf("the run could not be written: %w", err)
	}
	_ = recovery.LinkLatest(root, dir)
	st := p.record(ctx, dir, r)
	v := p.judge(ctx, st, r)
	p.render(ctx, dir, r, v, nil)
	if st != nil {
		st.Close()
	}
	return dir, p.result(r, dir, v)
}
