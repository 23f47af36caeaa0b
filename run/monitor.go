package run

import (
	"context"
	"time"

	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/internal/stage/sample"
	"github.com/inferbench/inferbench/result"
)

// The sample stage: monitors run beside every scenario's measured window (a probe of the engine)
// and attach what they saw to its result; with Monitor.Overhead every measured scenario runs again
// without them. The machinery is internal/stage/sample's; here are the options' checks and the calls.

func (m Monitor) validate() error {
	if m.Off {
		if m.Overhead {
			return exit.Usagef("--monitor-overhead needs the monitors: drop --no-monitor")
		}
		return nil
	}
	if m.Interval != 0 && m.Interval < time.Millisecond {
		return exit.Usagef("--monitor-interval %v: want 1ms or more", m.Interval)
	}
	if m.Grid != (result.Grid{}) {
		if err := m.Grid.Validate(); err != nil {
			return exit.Usagef("--grid-intensity/--pue: %v", err)
		}
	}
	return nil
}

// startMonitors opens the monitors' sources for the whole run; nil (no monitor) with Monitor.Off.
func (p *pipeline) startMonitors(ctx context.Context) *sample.Monitors {
	m := p.o.Monitor
	if m.Off {
		return nil
	}
	return sample.Open(ctx, sample.Config{Interval: m.Interval, Overhead: m.Overhead, Grid: m.Grid})
}

// overhead is the overhead pass of Monitor.Overhead, on an engine with the run's load and
// environment.
func (p *pipeline) overhead(ctx context.Context, mon *sample.Monitors, r *result.Run) []sample.OverheadRow {
	rows, err := mon.Overhead(ctx, r, engine.WithLoad(p.o.Load), engine.WithEnv(p.o.Env))
	p.errs = append(p.errs, err)
	return rows
}
