package load

import (
	"context"
	"fmt"
	"strings"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// Sweep finds how the server behaves from idle to saturated, in steps that each send
// measurement_iterations requests (or run for duration):
//
//  1. synchronous: one request at a time, the server's best latency and lowest rate;
//  2. throughput: every request at once (max_concurrency in flight, default 1024), its highest rate;
//  3. sweep.steps open loops (default 4) at rates evenly spaced between those two;
//  4. with SLOs and sweep.search > 0, a bisection between the two for the highest rate whose SLOs
//     hold.
//
// Every step's observations reach the scenario (its distributions mix the steps); the per-step
// figures are in the scenario's "sweep" section, and "slo_max_rps" is the search's answer.
func Sweep(ctx context.Context, s subject.Subject, c Config, sink Sink) error {
	steps, search := 4, 0
	if c.Sweep != nil {
		steps, search = c.Sweep.Steps, c.Sweep.Search
		if steps == 0 && search == 0 {
			steps = 4
		}
	}
	rep, _ := sink.(Reporter)
	var table []stepResult
	base := 0
	// Only the first step warms the server up; later steps go straight to measuring, but their
	// calls still reach the engine's sink, so it sees one warm-up phase and one measured phase.
	begun := false
	lagged := map[string][]string{} // by step: the client's own delays over ClientBoundLag
	step := func(name string, target float64, run func(ss *servingSink) error) (stepResult, error) {
		ss := newServingSink(&stepSink{Sink: sink, begun: &begun}, c)
		err := run(ss)
		r := ss.result(name)
		r.TargetRPS = target
		table = append(table, r)
		lagged[name] = ss.lagReasons()
		base += r.Requests + c.Warmup()
		return r, err
	}
	finish := func() {
		if rep == nil {
			return
		}
		rep.Extra(result.SectionSweep, table)
		var bound []string
		for _, st := range table {
			if why := append(clientBound(st, st.TargetRPS > 0), lagged[st.Name]...); len(why) > 0 {
				bound = append(bound, st.Name+": "+strings.Join(why, ", "))
			}
		}
		if len(bound) > 0 {
			rep.Extra(result.SectionClientBound, true)
			rep.Warn("client_bound: " + strings.Join(bound, "; ") + ": those steps may show the client's limits, not the server's")
		}
	}
	defer finish()

	first, err := step("synchronous", 0, func(ss *servingSink) error {
		return closedLoop(ctx, s, c, 1, ss, base)
	})
	if err != nil || ctx.Err() != nil {
		return err
	}
	noWarm := c
	zero := 0
	noWarm.WarmupIterations = &zero
	top, err := step("throughput", 0, func(ss *servingSink) error {
		return closedLoop(ctx, s, noWarm, offlineWidth(c), ss, base)
	})
	if err != nil || ctx.Err() != nil {
		return err
	}
	lo, hi := first.RPS, top.RPS
	if rep != nil {
		rep.Value("max_rps", hi)
		rep.Value("synchronous_rps", lo)
	}
	if hi <= lo {
		if rep != nil {
			rep.Warn(fmt.Sprintf("sweep: the throughput step (%.1f req/s) was no faster than the synchronous one (%.1f req/s); no rates between", hi, lo))
		}
		return nil
	}
	for k := 1; k <= steps; k++ {
		rate := lo + (hi-lo)*float64(k)/float64(steps+1)
		if _, err := step(fmt.Sprintf("rate=%.4g", rate), rate, func(ss *servingSink) error {
			return openLoop(ctx, s, c, rate, ss, base, false)
		}); err != nil || ctx.Err() != nil {
			return err
		}
	}
	if search == 0 || len(c.SLO) == 0 {
		return nil
	}
	best := 0.0
	if first.SLOsHold != nil && *first.SLOsHold {
		best = lo
	}
	for range search {
		mid := (lo + hi) / 2
		r, err := step(fmt.Sprintf("search=%.4g", mid), mid, func(ss *servingSink) error {
			return openLoop(ctx, s, c, mid, ss, base, false)
		})
		if err != nil || ctx.Err() != nil {
			return err
		}
		if r.SLOsHold != nil && *r.SLOsHold {
			lo, best = mid, mid
		} else {
			hi = mid
		}
	}
	if rep != nil {
		rep.Value("slo_max_rps", best)
	}
	return nil
}

// stepSink passes a sweep step's calls on, announcing each phase to the engine once.
type stepSink struct {
	Sink
	begun *bool
}

func (s *stepSink) Begin(p Phase) {
	if p == Measure {
		if *s.begun {
			return
		}
		*s.begun = true
	}
	s.Sink.Begin(p)
}
