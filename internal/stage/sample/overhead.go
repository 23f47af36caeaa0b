package sample

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// OverheadRow is one scenario of the overhead pass: its id and the difference the monitors made.
type OverheadRow struct {
	ID       string
	Overhead *result.Overhead
}

// Overhead runs every measured scenario again with no monitor, on an engine built with opts (the
// run's load and environment), and attaches the difference to its resources. Nothing runs without
// Config.Overhead, nor for an interrupted run (rows nil); otherwise the rows are not nil, so that
// the table is printed, empty when nothing could be compared. The error joins the scenarios that
// failed without monitors.
func (m *Monitors) Overhead(ctx context.Context, run *result.Run, opts ...engine.Option) ([]OverheadRow, error) {
	if m == nil || !m.cfg.Overhead || run.Partial {
		return nil, nil
	}
	eng := engine.New(opts...)
	rows := []OverheadRow{}
	var errs []error
	for _, sc := range m.seen {
		if ctx.Err() != nil {
			break
		}
		on := findScenario(run, sc.ID())
		if on == nil || on.Status != result.StatusOK {
			continue
		}
		off := eng.RunScenario(ctx, sc)
		if off.Status != result.StatusOK {
			errs = append(errs, fmt.Errorf("%s without monitors: %s", sc.ID(), off.Error))
			continue
		}
		ov := compareOverhead(on, &off)
		if on.Extra.Resources != nil {
			on.Extra.Resources.Overhead = ov
		}
		rows = append(rows, OverheadRow{sc.ID(), ov})
	}
	return rows, errors.Join(errs...)
}

func compareOverhead(on, off *result.Scenario) *result.Overhead {
	ov := &result.Overhead{Order: "monitors on, then off"}
	lon, lok := on.Metrics["latency_ms"]
	loff, fok := off.Metrics["latency_ms"]
	if lok && fok && lon.Summary != nil && loff.Summary != nil {
		ov.LatencyOnMS, ov.LatencyOffMS = lon.Summary.Median, loff.Summary.Median
		if ov.LatencyOffMS > 0 {
			ov.LatencyDelta = 100 * (ov.LatencyOnMS - ov.LatencyOffMS) / ov.LatencyOffMS
		}
		// Mann-Whitney U on the kept latency samples, as compare and benchstat do.
		if len(lon.Samples) > 0 && len(loff.Samples) > 0 {
			t := stats.MannWhitney(loff.Samples, lon.Samples, stats.DefaultAlpha)
			ov.P = t.P
			ov.Significant = t.P < stats.DefaultAlpha
		}
	}
	if v, ok := on.Metrics["throughput_ips"].Center(); ok {
		ov.ThroughputOn = v
	}
	if v, ok := off.Metrics["throughput_ips"].Center(); ok {
		ov.ThroughputOff = v
		if v > 0 {
			ov.ThroughputDel = 100 * (ov.ThroughputOn - v) / v
		}
	}
	if res := on.Extra.Resources; res != nil {
		ov.SamplerCost = res.CostPct
	}
	return ov
}

func findScenario(run *result.Run, id string) *result.Scenario {
	for i := range run.Scenarios {
		if run.Scenarios[i].ID() == id {
			return &run.Scenarios[i]
		}
	}
	return nil
}

// WriteOverhead prints the table of the overhead pass.
func WriteOverhead(w io.Writer, rows []OverheadRow) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "\nmonitor overhead (each scenario: first with monitors, then again without):")
	fmt.Fprintln(tw, "scenario\tlatency p50 on\toff\tdelta\tthroughput on\toff\tdelta\tsampling cost")
	for _, row := range rows {
		ov := row.Overhead
		sig := "~"
		if ov.Significant {
			sig = ""
		}
		fmt.Fprintf(tw, "%s\t%.3f ms\t%.3f ms\t%+.2f%%%s\t%.1f/s\t%.1f/s\t%+.2f%%\t%.3f%% of a core\n", row.ID,
			ov.LatencyOnMS, ov.LatencyOffMS, ov.LatencyDelta, sig, ov.ThroughputOn, ov.ThroughputOff, ov.ThroughputDel, ov.SamplerCost)
	}
	tw.Flush()
	fmt.Fprintln(w, "(~: not significant, Mann-Whitney U p >= 0.05; throughput is one figure per run and is not tested)")
}
