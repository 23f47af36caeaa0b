package merge

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// agentScenario is one agent's result of a scenario.
type agentScenario struct {
	run *result.Run
	sc  *result.Scenario
}

// windowRates are the value metrics recomputed over the union of the agents' windows.
var windowRates = map[string]func(w result.Window) float64{
	"requests_per_s":      func(w result.Window) float64 { return float64(w.OK) },
	"iterations_per_s":    func(w result.Window) float64 { return float64(w.OK) },
	"throughput_ips":      func(w result.Window) float64 { return float64(w.Items) },
	"output_tokens_per_s": func(w result.Window) float64 { return float64(w.OutputTokens) },
}

// combine merges one scenario's results from several agents.
func combine(ps []agentScenario, nAgents, keep int) (result.Scenario, error) {
	out := *ps[0].sc
	out.Metrics = map[string]result.Metric{}
	out.Extra = result.Extra{}
	out.Errors = nil
	out.Warnings = nil
	out.Iterations = result.Iterations{}
	hists, wins, allWins := combineRuns(&out, ps, nAgents)
	var union result.Window
	if allWins {
		union = unionWindow(wins)
		out.Extra.Window = &union
	}
	combineMetrics(&out, ps, hists, keep, allWins, union)
	skew := agentSkew(ps, wins)
	out.Extra.Agents = &skew
	if len(skew.ClientBound) > 0 {
		out.Extra.ClientBound = true
		out.Warnings = append(out.Warnings, fmt.Sprintf("client_bound: agent(s) %v limited their own load (schedule lag or CPU): the merged figures may show the clients' limits", skew.ClientBound))
	}
	if allWins && union.End.After(union.Start) {
		win := union.End.Sub(union.Start).Seconds() * 1000
		if skew.StartSpreadMS > 0.01*win {
			out.Warnings = append(out.Warnings, fmt.Sprintf("agents started %.0f ms apart, %.1f%% of the %.0f ms window: the combined load ramped up unevenly (use --start-at)", skew.StartSpreadMS, 100*skew.StartSpreadMS/win, win))
		}
	}
	return out, nil
}

// combineRuns merges into out what the agents' results of a scenario say of how it ran: the
// iterations, errors and warnings (each naming its agents), the status and the time it took.
// It returns each agent's histograms and window, and whether every agent had a window.
func combineRuns(out *result.Scenario, ps []agentScenario, nAgents int) (hists []map[string]*stats.Histogram, wins []*result.Window, allWins bool) {
	var errs []string
	failed, skipped := 0, 0
	var warnings []string             // in the order first given
	warnedBy := map[string][]string{} // warning -> the agents that gave it
	start, end := ps[0].sc.StartedAt, time.Time{}
	hists = make([]map[string]*stats.Histogram, len(ps))
	wins = make([]*result.Window, len(ps))
	allWins = true
	for k, p := range ps {
		sc := p.sc
		out.Iterations.Warmup += sc.Iterations.Warmup
		out.Iterations.Measured += sc.Iterations.Measured
		out.Iterations.Failed += sc.Iterations.Failed
		for _, e := range sc.Errors {
			if len(out.Errors) < result.MaxIterationErrors {
				out.Errors = append(out.Errors, e)
			}
		}
		for _, w := range sc.Warnings {
			if warnedBy[w] == nil {
				warnings = append(warnings, w)
			}
			if a := fmt.Sprint(p.run.Agent.Index); !slices.Contains(warnedBy[w], a) {
				warnedBy[w] = append(warnedBy[w], a)
			}
		}
		switch sc.Status {
		case result.StatusFailed:
			failed++
			errs = append(errs, fmt.Sprintf("agent %d: %s", p.run.Agent.Index, sc.Error))
		case result.StatusSkipped:
			skipped++
		}
		if sc.StartedAt.Before(start) {
			start = sc.StartedAt
		}
		if e := sc.StartedAt.Add(time.Duration(sc.DurationS * float64(time.Second))); e.After(end) {
			end = e
		}
		hists[k] = sc.Extra.Histograms
		if sc.Extra.Window != nil {
			w := *sc.Extra.Window
			wins[k] = &w
		} else {
			allWins = false
		}
	}
	// Each agent's warnings name it: "agent 2: ..." or, when several gave it, "agents 0, 3: ...".
	for _, w := range warnings {
		label := "agent "
		if len(warnedBy[w]) > 1 {
			label = "agents "
		}
		out.Warnings = append(out.Warnings, label+strings.Join(warnedBy[w], ", ")+": "+w)
	}
	out.StartedAt = start
	out.DurationS = end.Sub(start).Seconds()
	switch {
	case failed > 0:
		out.Status, out.Error = result.StatusFailed, strings.Join(errs, "; ")
	case skipped == len(ps):
		out.Status = result.StatusSkipped
	default:
		out.Status = result.StatusOK
	}
	if len(ps) < nAgents {
		out.Warnings = append(out.Warnings, fmt.Sprintf("ran on %d of %d agents", len(ps), nAgents))
	}
	return hists, wins, allWins
}

// combineMetrics merges the agents' metrics into out, by name: a distribution from the agents'
// histograms or samples (combineDist), a value as its metric adds up across agents
// (combineValue, over the union of the windows where every agent had one).
func combineMetrics(out *result.Scenario, ps []agentScenario, hists []map[string]*stats.Histogram, keep int, allWins bool, union result.Window) {
	merged := map[string]*stats.Histogram{}
	names := map[string]bool{}
	for _, p := range ps {
		for n := range p.sc.Metrics {
			names[n] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		var ms []result.Metric
		var owners []agentScenario // owners[k] reported ms[k]
		for _, p := range ps {
			if m, ok := p.sc.Metrics[name]; ok {
				ms = append(ms, m)
				owners = append(owners, p)
			}
		}
		m := ms[0]
		m.Samples, m.Summary, m.Value = nil, nil, nil
		switch {
		case ms[0].Summary != nil:
			h, s, samples, warn := combineDist(name, ps, ms, hists, keep)
			m.Summary, m.Samples = s, samples
			if h != nil {
				merged[name] = h
			}
			if warn != "" {
				out.Warnings = append(out.Warnings, warn)
			}
		default:
			v, note, ok := combineValue(name, m.Unit, owners, ms, out, allWins, union)
			if !ok {
				continue // no agent had a value
			}
			m.Value = &v
			if note != "" {
				m.Note = note
			}
		}
		out.Metrics[name] = m
	}
	if len(merged) > 0 {
		out.Extra.Histograms = merged
	}
}

func unionWindow(wins []*result.Window) result.Window {
	u := *wins[0]
	for _, w := range wins[1:] {
		if w.Start.Before(u.Start) {
			u.Start = w.Start
		}
		if w.End.After(u.End) {
			u.End = w.End
		}
		u.OK += w.OK
		u.Items += w.Items
		u.OutputTokens += w.OutputTokens
	}
	return u
}

// combineDist merges a distribution metric: histograms added when every agent kept one, else
// the raw samples pooled.
func combineDist(name string, ps []agentScenario, ms []result.Metric, hists []map[string]*stats.Histogram, keep int) (*stats.Histogram, *stats.Summary, []float64, string) {
	var pooled []float64
	n, exact := 0, len(ms) == len(ps)
	for _, m := range ms {
		pooled = append(pooled, m.Samples...)
		if m.Summary != nil {
			n += m.Summary.N
			exact = exact && len(m.Samples) == m.Summary.N
		}
	}
	all := len(ms) == len(ps)
	for _, h := range hists {
		if h[name] == nil {
			all = false
		}
	}
	samples := engine.Thin(pooled, keep)
	if all {
		h := stats.NewHistogram()
		for _, hs := range hists {
			h.Merge(hs[name])
		}
		if s, err := h.Summary(); err == nil {
			return h, &s, samples, ""
		}
	}
	s, err := stats.Summarize(pooled)
	if err != nil {
		return nil, nil, nil, ""
	}
	if exact {
		return nil, &s, samples, ""
	}
	s.N, s.Approximate = n, true
	s.Warnings = append(s.Warnings, "merged from the agents' kept samples, not histograms: percentiles are estimates")
	return nil, &s, samples, fmt.Sprintf("%s: some agents kept no histogram (run them with --agents), so its percentiles come from thinned samples", name)
}

// combineValue merges a single-value metric by what it measures: rates over the union window (or
// summed), ratios recomputed from counts, peaks and one-off times as the maximum.
func combineValue(name, unit string, ps []agentScenario, ms []result.Metric, out *result.Scenario, allWins bool, union result.Window) (float64, string, bool) {
	vals := make([]float64, 0, len(ms))
	for _, m := range ms {
		if m.Value != nil {
			vals = append(vals, *m.Value)
		}
	}
	if len(vals) == 0 {
		return 0, "", false
	}
	v, note := combineValues(name, unit, ps, ms, vals, out, allWins, union)
	return v, note, true
}

func combineValues(name, unit string, ps []agentScenario, ms []result.Metric, vals []float64, out *result.Scenario, allWins bool, union result.Window) (float64, string) {
	sum := 0.0
	for _, v := range vals {
		sum += v
	}
	it := out.Iterations
	switch {
	case name == "error_rate" && it.Measured > 0:
		return float64(it.Failed) / float64(it.Measured), ""
	case name == "success_rate" && it.Measured > 0:
		return float64(it.Measured-it.Failed) / float64(it.Measured), ""
	case windowRates[name] != nil && allWins && union.End.After(union.Start):
		return windowRates[name](union) / union.End.Sub(union.Start).Seconds(), ""
	case unit == "1/s" || unit == "tokens/s" || unit == "items/s" || unit == "cores" || unit == "requests":
		return sum, ""
	case unit == "MB" || unit == "ms" || unit == "s":
		return slices.Max(vals), "the largest of the agents' values"
	case unit == "ratio":
		w, tot := 0.0, 0.0
		for k, m := range ms {
			if m.Value == nil {
				continue
			}
			n := float64(ps[k].sc.Iterations.Measured)
			w += n * *m.Value
			tot += n
		}
		if tot > 0 {
			return w / tot, ""
		}
	}
	return sum / float64(len(vals)), "the mean of the agents' values"
}

// agentSkew describes how the agents lined up in one scenario.
func agentSkew(ps []agentScenario, wins []*result.Window) result.Skew {
	var sk result.Skew
	var first, last, firstEnd, lastEnd time.Time
	for k, p := range ps {
		a := result.AgentSkew{
			Agent: p.run.Agent.Index, RunID: p.run.ID, ClockOffsetMS: p.run.Agent.ClockOffsetMS,
			Requests: p.sc.Iterations.Measured, Failed: p.sc.Iterations.Failed,
		}
		a.Host, _ = p.run.Environment["hostname"].(string)
		if w := wins[k]; w != nil {
			a.Start, a.End = w.Start, w.End
			if d := w.End.Sub(w.Start).Seconds(); d > 0 {
				a.RequestsPerS = float64(w.OK) / d
			}
			if sa := p.run.Agent.StartAt; !sa.IsZero() {
				lag := unixMS(w.Start) - unixMS(sa)
				a.StartLagMS = &lag
			}
			// Compare starts on one clock: subtract each agent's measured offset.
			off := time.Duration(0)
			if p.run.Agent.ClockOffsetMS != nil {
				off = time.Duration(*p.run.Agent.ClockOffsetMS * float64(time.Millisecond))
			}
			s, e := w.Start.Add(-off), w.End.Add(-off)
			if first.IsZero() || s.Before(first) {
				first = s
			}
			if s.After(last) {
				last = s
			}
			if firstEnd.IsZero() || e.Before(firstEnd) {
				firstEnd = e
			}
			if e.After(lastEnd) {
				lastEnd = e
			}
		}
		if m, ok := p.sc.Metrics["schedule_lag_ms"]; ok && m.Summary != nil {
			v := m.Summary.P99
			a.ScheduleLagP99MS = &v
		}
		if m, ok := p.sc.Metrics["client_cpu_cores"]; ok && m.Value != nil {
			v := *m.Value
			a.ClientCPUCores = &v
		}
		if p.sc.Extra.ClientBound {
			a.ClientBound = true
			sk.ClientBound = append(sk.ClientBound, a.Agent)
		}
		sk.Agents = append(sk.Agents, a)
	}
	if !first.IsZero() {
		sk.StartSpreadMS = float64(last.Sub(first)) / 1e6
		sk.EndSpreadMS = float64(lastEnd.Sub(firstEnd)) / 1e6
	}
	return sk
}
