package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/inferbench/inferbench/internal/capacity"
	"github.com/inferbench/inferbench/internal/kind/openai"
	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/load"

	// The built-in load modes register their drivers with load.RegisterDriver.
	_ "github.com/inferbench/inferbench/internal/drive"
	"github.com/inferbench/inferbench/subject"
)

// searchLive runs one search as `inferbench capacity` does, through the load driver and the
// openai subject, against a mockserver serving model m in this process. It returns the result,
// the seconds its steps took, the requests it sent and whether the load driver warned that the
// client may have paced a step (client_bound: its own delays as large as the SLOs).
func searchLive(ctx context.Context, m mockserver.Capacity, c Config, o capacity.Options, seed uint64) (capacity.Result, float64, int64, bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	url, err := mockserver.New(mockserver.Config{Capacity: m, OutputTokens: workload.Fixed(float64(c.Tokens))}).Start(ctx, "")
	if err != nil {
		return capacity.Result{}, 0, 0, false, err
	}
	subj, err := openai.Open(ctx, openai.Config{URL: url, Model: "mock", MetricsURL: "none",
		Workload: workload.Config{Seed: seed, InputTokens: workload.Fixed(8), OutputTokens: workload.Fixed(float64(c.Tokens))}}, nil, "")
	if err != nil {
		return capacity.Result{}, 0, 0, false, fmt.Errorf("live: %w", err)
	}
	defer subj.Close()
	cfg := load.Config{Mode: load.ModeCapacity, SLO: c.SLOs, Seed: seed,
		Capacity: &load.CapacityConfig{Start: o.Start, Attainment: c.Attainment}}
	sink := &counting{}
	drive, _ := load.Lookup(cfg)
	err = drive(ctx, subj, cfg, sink)
	res := sink.res
	secs := 0.0
	for _, st := range res.Steps {
		secs += st.Seconds
	}
	return res, secs, sink.n.Load(), sink.bound.Load(), err
}

// counting is a sink that counts the requests sent, notes a client_bound warning and keeps the
// search's result (the "capacity" section the driver reports).
type counting struct {
	n     atomic.Int64
	bound atomic.Bool
	res   capacity.Result
}

func (*counting) Begin(load.Phase)                                 {}
func (s *counting) Observe(load.Phase, subject.Observation, error) { s.n.Add(1) }
func (*counting) Value(string, float64)                            {}
func (s *counting) Extra(_ string, v any) {
	if r, ok := v.(capacity.Result); ok {
		s.res = r
	}
}
func (s *counting) Warn(msg string) {
	if strings.Contains(msg, "client") {
		s.bound.Store(true)
	}
}
