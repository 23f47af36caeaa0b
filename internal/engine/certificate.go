package engine

import (
	"github.com/inferbench/inferbench/internal/certify"
	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
)

// certify sets a serving scenario's certificate (package certify) from its finished result and
// what the collector kept: the requests' order and times.
func (s *scenario) certify(r *result.Scenario) {
	cfg := s.cfg
	if !cfg.Serving() || r.Iterations.Measured == 0 {
		return
	}
	open := false
	switch cfg.Mode {
	case load.ModeRate, load.ModeTrace, load.ModeSweep, load.ModeCapacity:
		open = true
	}
	target := 0
	switch cfg.Mode {
	case load.ModeConcurrency, load.ModeSessions:
		target = cfg.Concurrency
	case load.ModeOffline:
		target = cfg.MaxConcurrency
	}
	var ev certify.Evidence
	s.col.WithFigures(func(f *figures.Figures) {
		ev = certify.EvidenceOf(f, open, target, cfg.Mode != load.ModeSweep && cfg.Mode != load.ModeCapacity)
	})
	r.Extra.Certificate = certify.Scenario(r, ev)
}
