// Package sample is the sample stage of a run (package run): the resource monitors beside every
// scenario's measured window, started by an engine probe when the window opens, what they saw
// attached to the scenario's result when it closes (Attach), the overhead pass that runs each
// measured scenario again without them (Monitors.Overhead), and the environment fingerprint
// recorded with the run (Sysinfo, with the GPUs NVML lists).
//
// The engine knows the monitors only as a probe (engine.WithProbe); run opens them for the whole
// run, hands their options to the engine and renders the overhead table.
package sample

import (
	"context"
	"sync"
	"time"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/internal/monitor"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// Config is how the monitors sample (run.Monitor, whose Off opens none).
type Config struct {
	Interval time.Duration // sampling period; monitor.DefaultInterval when 0
	// Overhead keeps the scenarios measured, for the overhead pass.
	Overhead bool
	Grid     result.Grid // carbon intensity and PUE for co2e_g; result.DefaultGrid when zero
}

// Monitors are the sources sampled beside every scenario of a run. A nil *Monitors samples
// nothing.
type Monitors struct {
	cfg  Config
	src  *monitor.Sources
	mu   sync.Mutex
	seen []*suite.Scenario // scenarios measured, for the overhead pass
}

// Open opens the sources (process tree, system, RAPL, the GPUs) for a whole run; Close closes
// them.
func Open(ctx context.Context, c Config) *Monitors {
	if c.Interval == 0 {
		c.Interval = monitor.DefaultInterval
	}
	if c.Grid == (result.Grid{}) {
		c.Grid = result.DefaultGrid
	}
	return &Monitors{cfg: c, src: monitor.Open(ctx, monitor.Config{Interval: c.Interval})}
}

// Options are the engine options that run the monitors beside each measured window.
func (m *Monitors) Options() []engine.Option {
	if m == nil {
		return nil
	}
	return []engine.Option{engine.WithProbe(m.probe)}
}

// Close closes the sources.
func (m *Monitors) Close() {
	if m != nil {
		m.src.Close()
	}
}

// probe starts a Monitor over the subject's processes (or the harness, for subjects that run
// in-process or talk to a server), and the server's metrics endpoint when it has one, when the
// measured window opens; its stop attaches what they saw.
func (m *Monitors) probe(ctx context.Context, sc *suite.Scenario, s subject.Subject) (func(*result.Scenario), error) {
	var pids func() []int
	if p, ok := s.(subject.Processes); ok {
		pids = p.PIDs
	}
	extra, warning := serverSamplers(ctx, s)
	mon := m.src.Monitor(pids, extra...)
	mon.Start()
	if m.cfg.Overhead {
		m.mu.Lock()
		m.seen = append(m.seen, sc)
		m.mu.Unlock()
	}
	return func(r *result.Scenario) {
		Attach(r, mon.Stop(), pids != nil, m.cfg.Grid, monitor.DefaultGrowthThreshold)
		if warning != "" {
			r.Warnings = append(r.Warnings, warning)
		}
	}, nil
}
