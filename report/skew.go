package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/inferbench/inferbench/result"
)

// skewView is one merged scenario's agent skew (extra.agents; docs/metrics.md defines each
// figure), formatted for the text table and report.html.
type skewView struct {
	Scenario               string
	StartSpread, EndSpread string // ms
	ClientBound            bool
	Agents                 []agentView
}

type agentView struct {
	Agent, Host, StartLag, ClockOffset, Requests, Failed, ReqS, SchedLag, CPU string
	ClientBound                                                               bool
}

// skews returns the skew of each scenario of r that merged agents, in order.
func skews(scs []*result.Scenario) []skewView {
	opt := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return num(*p)
	}
	var out []skewView
	for _, s := range scs {
		sk := s.Extra.Agents
		if sk == nil || len(sk.Agents) == 0 {
			continue
		}
		v := skewView{Scenario: s.ID(), StartSpread: num(sk.StartSpreadMS), EndSpread: num(sk.EndSpreadMS), ClientBound: len(sk.ClientBound) > 0}
		for _, a := range sk.Agents {
			host := a.Host
			if host == "" {
				host = "-"
			}
			v.Agents = append(v.Agents, agentView{
				Agent: fmt.Sprint(a.Agent), Host: host, StartLag: opt(a.StartLagMS), ClockOffset: opt(a.ClockOffsetMS),
				Requests: fmt.Sprint(a.Requests), Failed: fmt.Sprint(a.Failed), ReqS: num(a.RequestsPerS),
				SchedLag: opt(a.ScheduleLagP99MS), CPU: opt(a.ClientCPUCores), ClientBound: a.ClientBound,
			})
		}
		out = append(out, v)
	}
	return out
}

// writeSkew writes the agent skew of a run merged from load agents (inferbench merge): per scenario,
// the start and end spread across the agents, then one line per agent with its start lag, clock
// offset, requests, failed requests, rate, schedule-lag p99, client CPU and client_bound flag.
// It writes nothing for other runs.
func writeSkew(w io.Writer, r *result.Run) error {
	scs := make([]*result.Scenario, len(r.Scenarios))
	for i := range r.Scenarios {
		scs[i] = &r.Scenarios[i]
	}
	views := skews(scs)
	if len(views) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nagent skew:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tAGENT\tHOST\tSTART LAG ms\tCLOCK OFFSET ms\tREQUESTS\tFAILED\tREQ/s\tSCHED LAG P99 ms\tCLIENT CPU cores\tCLIENT BOUND\t")
	for _, v := range views {
		for _, a := range v.Agents {
			bound := "no"
			if a.ClientBound {
				bound = "YES"
			}
			fmt.Fprintln(tw, strings.Join([]string{v.Scenario, a.Agent, a.Host, a.StartLag, a.ClockOffset, a.Requests, a.Failed, a.ReqS, a.SchedLag, a.CPU, bound}, "\t")+"\t")
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, v := range views {
		if _, err := fmt.Fprintf(w, "%s: start spread %s ms, end spread %s ms\n", v.Scenario, v.StartSpread, v.EndSpread); err != nil {
			return err
		}
	}
	return nil
}
