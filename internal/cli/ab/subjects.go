package ab

import (
	"context"
	"fmt"
	"sync"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/subject"
)

// Subjects returns the Sampler of two opened subjects: a block of n calls is n measured calls of
// the single load mode (one at a time, each bounded by cfg's timeout; a subject that batches is asked in
// batches), and the value of a call is the metric the subject reported for it, or for latency_ms
// the round trip when the subject did not time itself; a generation metric (ttft_ms, e2e_ms,
// tpot_ms) is derived from a streamed call as run.json's is (figures.StreamMetrics).
func Subjects(a, b subject.Subject, cfg load.Config, metric string) Sampler {
	return subjectsWith(&[2]subject.Subject{a, b}, cfg, metric, nil)
}

// subjectsWith is Subjects of the subjects *subs holds when each block starts (a relaunch
// replaces them), that also hands each block's other per-call figures (cpu_ms, a subject's own
// metrics), by name, to others.
func subjectsWith(subs *[2]subject.Subject, cfg load.Config, metric string, others func(map[string][]float64)) Sampler {
	if metric == "" {
		metric = "latency_ms"
	}
	return func(ctx context.Context, v, n int) ([]float64, int, error) {
		c := cfg
		zero := 0
		c.WarmupIterations, c.MeasurementIterations = &zero, &n
		c.MinTime, c.MaxTime = 0, 0
		c.Mode = load.ModeSingle
		drive, ok := load.Lookup(c)
		if !ok {
			return nil, 0, fmt.Errorf("no driver for load mode %q (load registers it)", c.Mode)
		}
		sink := &blockSink{metric: metric, figs: figures.New(0, nil, false, 0)} // 0: the default bound, far above a block
		if others != nil {
			sink.others = map[string][]float64{}
			defer func() { others(sink.others) }()
		}
		err := drive(ctx, subs[v], c, sink)
		values, missing := sink.block()
		if err != nil {
			return values, sink.failed, err
		}
		if sink.failed > 0 && len(values) == 0 {
			return nil, sink.failed, fmt.Errorf("all %d calls failed: %w", sink.failed, sink.first)
		}
		if missing > 0 && len(values) == 0 {
			return nil, sink.failed, fmt.Errorf("the subject reported no %s (it reports it per call, or the metric is latency_ms)", metric)
		}
		return values, sink.failed, nil
	}
}

// blockSink keeps the compared metric of each measured call: the subject's own figure, the
// round trip for latency_ms, else the block's window of the figures (figures.Figures, exact: every
// sample kept), where each call's generation metrics are derived once, as run.json's are.
type blockSink struct {
	mu      sync.Mutex
	metric  string
	values  []float64        // the subject's figures and round trips
	figs    *figures.Figures // the other calls' derived figures
	derived int              // the calls observed by figs
	failed  int
	first   error                // the first call's error
	others  map[string][]float64 // the other figures of the calls, when kept
}

// block returns the block's values of the metric, and how many calls had none.
func (s *blockSink) block() (values []float64, missing int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	values = s.values
	n := 0
	s.figs.Each(func(name string, d *stats.Dist) {
		if name == s.metric {
			values = append(values, d.Samples()...)
			n = len(d.Samples())
		}
	})
	return values, s.derived - n
}

func (s *blockSink) Begin(load.Phase) {}

func (s *blockSink) Observe(p load.Phase, o subject.Observation, err error) {
	if p != load.Measure {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.failed == 0 {
			s.first = err
		}
		s.failed++
		return
	}
	if s.others != nil {
		for k, v := range o.Values {
			if k != s.metric {
				s.others[k] = append(s.others[k], v)
			}
		}
	}
	if v, ok := o.Values[s.metric]; ok {
		s.values = append(s.values, v)
		return
	}
	if s.metric == "latency_ms" && !o.Start.IsZero() {
		s.values = append(s.values, float64(o.End.Sub(o.Start))/1e6)
		return
	}
	// A generation metric is what run.json has for the call (figures.StreamMetrics): only a call
	// that streamed has one. itl_ms is one value a token, not a call: it stays missing.
	s.derived++
	if s.metric != "itl_ms" {
		s.figs.Observe(o, nil)
	}
}

var _ load.Sink = (*blockSink)(nil)
