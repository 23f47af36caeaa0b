package engine

import (
	"github.com/inferbench/inferbench/internal/certify"
	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// certify sets a serving scenario's certificate (package certify) from its finished result and
// what the collector kept: the requests' order and times.
func (s *scenario) certify(r *result.Scenario) {
	cfg := s.cfg
	if !cfg.Serving() || r.Iterations.Measured == 0 {
		return
	}
	ev := certify.Evidence{Ordered: map[string][]float64{}}
	switch cfg.Mode {
	case load.ModeRate, load.ModeTrace, load.ModeSweep, load.ModeCapacity:
		ev.OpenLoop = true
	}
	target := 0
	switch cfg.Mode {
	case load.ModeConcurrency, load.ModeSessions:
		target = cfg.Concurrency
	case load.ModeOffline:
		target = cfg.MaxConcurrency
	}
	s.col.WithFigures(func(f *figures.Figures) {
		// A sweep's or a capacity search's steps each have their own level: no one window.
		if cfg.Mode != load.ModeSweep && cfg.Mode != load.ModeCapacity {
			if st, ok := f.Steady(target); ok {
				ev.Steady = &st
			}
		}
		f.Each(func(name string, d *stats.Dist) {
			switch name {
			case "ttft_ms", "tpot_ms", "e2e_ms":
				if d.Exact() {
					ev.Ordered[name] = d.Samples()
				}
			}
		})
	})
	r.Extra.Certificate = certify.Scenario(r, ev)
}
