package drive

import (
	"context"
	"fmt"
	"strings"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// driveSweep finds how the server behaves from idle to saturated, in steps that each send
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
func driveSweep(ctx context.Context, s subject.Subject, c load.Config, sink load.Sink) error {
	steps, search := 4, 0
	if c.Sweep != nil {
		steps, search = c.Sweep.Steps, c.Sweep.Search
		if steps == 0 && search == 0 {
			steps = 4
		}
	}
	w := &sweep{c: c, lagged: map[string][]string{}}
	w.rep, _ = sink.(load.Reporter)
	// One keeper of the figures for every step: each step is a window of its distributions.
	w.kept = keeping(sink, c)
	defer w.report()

	first, err := w.step("synchronous", 0, func(ss *servingSink) error {
		return closedLoop(ctx, s, c, 1, ss, w.base)
	})
	if err != nil || ctx.Err() != nil {
		return err
	}
	top, err := w.throughput(ctx, s)
	if err != nil || ctx.Err() != nil {
		return err
	}
	lo, hi := first.RPS, top.RPS
	w.value("max_rps", hi)
	w.value("synchronous_rps", lo)
	if hi <= lo {
		if w.rep != nil {
			w.rep.Warn(fmt.Sprintf("sweep: the throughput step (%.1f req/s) was no faster than the synchronous one (%.1f req/s); no rates between", hi, lo))
		}
		return nil
	}
	rate := func(name string, r float64) (stepResult, error) {
		return w.step(fmt.Sprintf("%s=%.4g", name, r), r, func(ss *servingSink) error {
			return openLoop(ctx, s, c, r, ss, w.base, false)
		})
	}
	for k := 1; k <= steps; k++ {
		if _, err := rate("rate", lo+(hi-lo)*float64(k)/float64(steps+1)); err != nil || ctx.Err() != nil {
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
		r, err := rate("search", mid)
		if err != nil || ctx.Err() != nil {
			return err
		}
		if r.SLOsHold != nil && *r.SLOsHold {
			lo, best = mid, mid
		} else {
			hi = mid
		}
	}
	w.value("slo_max_rps", best)
	return nil
}

// sweep is one run of mode sweep: its steps so far.
type sweep struct {
	c      load.Config
	kept   load.Sink // the keeper of the figures (keeping)
	rep    load.Reporter
	table  []stepResult
	base   int                 // the index of the next step's first request
	lagged map[string][]string // by step: the client's own delays that moved its figures (lagReasons)
	// Only the first step warms the server up; later steps go straight to measuring, but their
	// calls still reach the engine's sink, so it sees one warm-up phase and one measured phase.
	begun bool
}

// step runs one step (run) as a window of the figures and adds its row to the table.
func (w *sweep) step(name string, target float64, run func(ss *servingSink) error) (stepResult, error) {
	ss := newServingSink(&stepSink{Sink: w.kept, Keeper: w.kept.(figures.Keeper), begun: &w.begun}, w.c)
	ss.startStep()
	err := run(ss)
	r := ss.result(name)
	r.TargetRPS = target
	w.table = append(w.table, r)
	w.lagged[name] = ss.lagReasons(target > 0)
	w.base += r.Requests + w.c.Warmup()
	return r, err
}

// throughput runs the throughput step: a closed loop as wide as an offline load, without warm-up
// iterations, whose rate is the highest the server gave.
func (w *sweep) throughput(ctx context.Context, s subject.Subject) (stepResult, error) {
	noWarm := w.c
	zero := 0
	noWarm.WarmupIterations = &zero
	return w.step("throughput", 0, func(ss *servingSink) error {
		return closedLoop(ctx, s, noWarm, offlineWidth(w.c), ss, w.base)
	})
}

func (w *sweep) value(name string, v float64) {
	if w.rep != nil {
		w.rep.Value(name, v)
	}
}

// report hands the table to the engine's sink and warns of the steps the client may have paced.
func (w *sweep) report() {
	if w.rep == nil {
		return
	}
	w.rep.Extra(result.SectionSweep, w.table)
	var bound []string
	for _, st := range w.table {
		if why := append(clientBound(st, st.TargetRPS > 0), w.lagged[st.Name]...); len(why) > 0 {
			bound = append(bound, st.Name+": "+strings.Join(why, ", "))
		}
	}
	if len(bound) > 0 {
		w.rep.Extra(result.SectionClientBound, true)
		w.rep.Warn("client_bound: " + strings.Join(bound, "; ") + ": those steps may show the client's limits, not the server's")
	}
}

// stepSink passes a sweep step's calls on, announcing each phase to the engine once.
type stepSink struct {
	load.Sink
	figures.Keeper
	begun *bool
}

func (s *stepSink) Begin(p load.Phase) {
	if p == load.Measure {
		if *s.begun {
			return
		}
		*s.begun = true
	}
	s.Sink.Begin(p)
}
