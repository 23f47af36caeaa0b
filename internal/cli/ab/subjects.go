package ab

import (
	"context"
	"fmt"
	"sync"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/subject"
)

// Subjects returns the Sampler of two opened subjects: a block of n calls is n measured calls of
// the single load mode (one at a time, each bounded by cfg's timeout; a subject that batches is asked in
// batches), and the value of a call is the metric the subject reported for it, or for latency_ms
// the round trip when the subject did not time itself; a generation metric (ttft_ms, e2e_ms,
// tpot_ms) is derived from a streamed call as run.json's is (figures.StreamMetrics).
func Subjects(a, b subject.Subject, cfg load.Config, metric string) Sampler {
	return subjectsWith(a, b, cfg, metric, nil)
}

// subjectsWith is Subjects that also hands each block's other per-call figures (cpu_ms, a
// subject's own metrics), by name, to others.
func subjectsWith(a, b subject.Subject, cfg load.Config, metric string, others func(map[string][]float64)) Sampler {
	if metric == "" {
		metric = "latency_ms"
	}
	subs := [2]subject.Subject{a, b}
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
		sink := &blockSink{metric: metric}
		if others != nil {
			sink.others = map[string][]float64{}
			defer func() { others(sink.others) }()
		}
		if err := drive(ctx, subs[v], c, sink); err != nil {
			return sink.values, sink.failed, err
		}
		if sink.failed > 0 && len(sink.values) == 0 {
			return nil, sink.failed, fmt.Errorf("all %d calls failed: %w", sink.failed, sink.first)
		}
		if sink.missing > 0 && len(sink.values) == 0 {
			return nil, sink.failed, fmt.Errorf("the subject reported no %s (it reports it per call, or the metric is latency_ms)", metric)
		}
		return sink.values, sink.failed, nil
	}
}

// blockSink keeps the compared metric of each measured call.
type blockSink struct {
	mu      sync.Mutex
	metric  string
	values  []float64
	failed  int
	first   error // the first call's error
	missing int
	others  map[string][]float64 // the other figures of the calls, when kept
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
	// that streamed has one. itl_ms is one value a token, not a call.
	found := false
	if s.metric != "itl_ms" {
		figures.StreamMetrics(o, func(m string, v float64) {
			if m == s.metric && !found {
				s.values, found = append(s.values, v), true
			}
		})
	}
	if !found {
		s.missing++
	}
}

var _ load.Sink = (*blockSink)(nil)
