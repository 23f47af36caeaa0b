package load

import (
	"sync"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/subject"
)

// figureSink keeps the figures of a load whose sink keeps none (a library caller's, the load's
// own tests'): it adds each measured call before passing it on.
type figureSink struct {
	Sink
	mu   sync.Mutex
	figs *figures.Figures
}

func (s *figureSink) Begin(p Phase) {
	if p == Measure {
		s.mu.Lock()
		s.figs.Begin()
		s.mu.Unlock()
	}
	s.Sink.Begin(p)
}

func (s *figureSink) Observe(p Phase, o subject.Observation, err error) {
	if p == Measure {
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
func keeping(next Sink, c Config) Sink {
	if _, ok := next.(figures.Keeper); ok {
		return next
	}
	return &figureSink{Sink: next, figs: figures.New(figures.StepSamples, c.SLO, c.Serving(), c.Slice)}
}

var (
	_ figures.Keeper = (*figureSink)(nil)
	_ Sink           = (*figureSink)(nil)
)
