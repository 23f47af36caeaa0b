package engine

import (
	"strings"
	"testing"

	"github.com/inferbench/inferbench/load"
)

// TestAgentSplitAddsUp: the agents' shares of a load add up to the whole, and their arrival
// seeds differ.
func TestAgentSplitAddsUp(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 16} {
		reqs := 1001
		base := load.Config{Mode: load.ModeConcurrency, Concurrency: 50, MeasurementIterations: &reqs, MaxConcurrency: 0}
		rateCfg := load.Config{Mode: load.ModeRate, Rate: 90, MeasurementIterations: &reqs, MaxConcurrency: 64, Seed: 5}
		conc, total, rate := 0, 0, 0.0
		seeds := map[uint64]bool{}
		for i := range n {
			a := Agent{Index: i, Count: n}
			c, err := a.Split(base)
			if err != nil {
				t.Fatal(err)
			}
			conc += c.Concurrency
			total += *c.MeasurementIterations
			r, err := a.Split(rateCfg)
			if err != nil {
				t.Fatal(err)
			}
			rate += r.Rate
			seeds[r.Seed] = true
			if r.MaxConcurrency*n < 64 {
				t.Errorf("n %d: in-flight cap %d per agent is below the whole's share", n, r.MaxConcurrency)
			}
		}
		if conc != 50 || total != 1001 || rate < 90-1e-9 || rate > 90+1e-9 {
			t.Errorf("n %d: shares add to concurrency %d, requests %d, rate %v", n, conc, total, rate)
		}
		if n > 1 && len(seeds) != n {
			t.Errorf("n %d: %d distinct seeds", n, len(seeds))
		}
	}
	if _, err := (Agent{Index: 0, Count: 8}).Split(load.Config{Mode: load.ModeConcurrency, Concurrency: 4}); err == nil || !strings.Contains(err.Error(), "concurrency 4") {
		t.Errorf("err = %v", err)
	}
	if _, err := (Agent{Index: 0, Count: 2}).Split(load.Config{Mode: load.ModeSweep}); err == nil {
		t.Error("a sweep was split")
	}
}
