package ab

import (
	"github.com/inferbench/inferbench/internal/stage/sample"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// The resources of a run against a ref: each side sampled during its own measured blocks
// (sample.Sides), the working tree's figures the scenario's metrics and the ref's in its
// baseline_ref section, as for latency. Where a side runs is what can be told apart: a Go
// function's block is a process of that side's binary, which samples itself over its measured
// calls (sample.ByOwnProcess); a worker's are its processes (sample.BySubject); a command's and
// a server's client run from inferbench, whose tree is sampled during the side's blocks
// (sample.ByHarness: its CPU time and energy are the side's calls', its memory is not).

// SampleWith makes the run's monitors sample each side of the scenarios (run.Paired's optional
// ability, called before the first scenario is measured).
func (f *Ref) SampleWith(m *sample.Monitors) {
	f.mon = m
	if f.procs != nil {
		f.procs.monitor = nil
		if d := m.Sides().Interval(); d > 0 {
			f.procs.monitor = []string{"--monitor-interval", d.String()}
		}
	}
}

// sideSampling is one scenario's sampling of its two sides.
type sideSampling struct {
	sides *sample.Sides
	by    sample.By
	last  *result.Resources // the resources of a Go function's last block, kept once measured
}

// sampling returns the sampling of a scenario of kind (nil sides: the run samples nothing).
func (f *Ref) sampling(kind string) *sideSampling {
	by := sample.ByHarness
	if kind == "gofunc" {
		by = sample.ByOwnProcess
	}
	return &sideSampling{sides: f.mon.Sides(), by: by}
}

// window is Options.Window over the subjects *subs holds when each block starts: a side's
// processes where its subject has them, else inferbench's tree.
func (s *sideSampling) window(subs *[2]subject.Subject) func(v int) func() {
	if s.sides == nil {
		return nil
	}
	if _, ok := subs[0].(subject.Processes); ok {
		s.by = sample.BySubject
	}
	return func(v int) func() {
		if s.by == sample.ByHarness {
			return s.sides.Window(v, nil)
		}
		return s.sides.Window(v, func() []int {
			if p, ok := subs[v].(subject.Processes); ok {
				return p.PIDs()
			}
			return nil
		})
	}
}

// block keeps the resources a Go function's block sampled (procSides.sampler); measured adds
// them to the side once the block is known to be a measured one.
func (s *sideSampling) block(r *result.Resources) { s.last = r }

func (s *sideSampling) measured(bl Block) {
	if s.by == sample.ByOwnProcess && s.last != nil {
		s.sides.Add(bl.Side(), s.last)
	}
	s.last = nil
}

// attach adds each side's resources: the working tree's to sc, the ref's to sec. A command's own
// peak RSS (peak_rss_mb, which it reports with each call: others holds each measured block's
// figures, in order) is each side's peak over its calls, as in a run.
func (s *sideSampling) attach(sc *result.Scenario, sec *RefSection, blocks []Block, others []map[string][]float64) {
	var base result.Scenario
	sides := [2]*result.Scenario{&base, sc}
	for i, bl := range blocks {
		if i >= len(others) {
			break
		}
		for _, x := range others[i][peakRSS] {
			m := sides[bl.Side()]
			if m.Metrics == nil {
				m.Metrics = map[string]result.Metric{}
			}
			if old, ok := m.Metrics[peakRSS]; !ok || *old.Value < x {
				v := result.NewMetric(peakRSS)
				v.Value = &x
				m.Metrics[peakRSS] = v
			}
		}
	}
	if s.sides != nil {
		for v, r := range sides {
			s.sides.Attach(v, r, s.by)
		}
	}
	if len(base.Metrics) > 0 {
		sec.BaselineMetrics = base.Metrics
	}
	sec.BaselineResources = base.Extra.Resources
}

// peakRSS is a command's own peak RSS, reported with each call (exec.PeakRSS).
const peakRSS = "peak_rss_mb"
