package main

import (
	"context"
	"fmt"

	"github.com/inferbench/inferbench/capacity"
	"github.com/inferbench/inferbench/internal/kind/openai"
	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/subject"
)

// searchLive runs one search as `inferbench capacity` does, through the load driver and the
// openai subject, against a mockserver serving model m in this process. It returns the result
// and the seconds its steps took.
func searchLive(ctx context.Context, m mockserver.Capacity, c Config, o capacity.Options, seed uint64) (capacity.Result, float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	url, err := mockserver.New(mockserver.Config{Capacity: m, OutputTokens: workload.Fixed(float64(c.Tokens))}).Start(ctx, "")
	if err != nil {
		return capacity.Result{}, 0, err
	}
	subj, err := openai.Open(ctx, openai.Config{URL: url, Model: "mock", MetricsURL: "none",
		Workload: workload.Config{Seed: seed, InputTokens: workload.Fixed(8), OutputTokens: workload.Fixed(float64(c.Tokens))}}, nil, "")
	if err != nil {
		return capacity.Result{}, 0, fmt.Errorf("live: %w", err)
	}
	defer subj.Close()
	cfg := load.Config{Mode: load.ModeCapacity, SLO: c.SLOs, Seed: seed,
		Capacity: &load.CapacityConfig{Start: o.Start, Attainment: c.Attainment}}
	res, err := load.SearchCapacity(ctx, subj, cfg, discard{})
	secs := 0.0
	for _, st := range res.Steps {
		secs += st.Seconds
	}
	return res, secs, err
}

// discard is a sink that keeps nothing: the search's figures are its result.
type discard struct{}

func (discard) Begin(load.Phase)                               {}
func (discard) Observe(load.Phase, subject.Observation, error) {}
