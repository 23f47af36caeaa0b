package drive

import (
	"sync"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/subject"
)

// figureSink keeps the figures of a load whose sink keeps none (a library caller's, the load's
// own tests'): it adds each measured call before passing it on.
type figureSink struct {
	load.Sink
	mu   sync.Mutex
	figs *figures.Figures
}

func (s *figureSink) Begin(p load.Phase) {
	if p == load.Measure {
		s.mu.Lock()
		s.figs.Begin()
		s.mu.Unlock()
	}
	s.Sink.Begin(p)
}

func (s *figureSink) Observe(p load.Phase, o subject.Observation, err error) {
	if p == load.Measure {
		s.mu.Lock()
		s.figs.Observe(o, err)
		if err == nil && !o.Start.IsZero() {
			for k, v := range o.Values {
				s.figs.Add(k, v)
			}
		}
		s.mu.Unlock()
	}
	s.Sink.Observe(p, o, err)
}

func (s *figureSink) WithFigures(f func(*figures.Figures)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s.figs)
}

// keeping returns next when it keeps the figures, else next behind a figureSink.
func keeping(next load.Sink, c load.Config) load.Sink {
	if _, ok := next.(figures.Keeper); ok {
		return next
	}
	return &figureSink{Sink: next, figs: figures.New(figures.StepSamples, c.SLO, c.Serving(), c.Slice)}
}

var (
	_ figures.Keeper = (*figureSink)(nil)
	_ load.Sink      = (*figureSink)(nil)
)
