package monitor

import (
	"testing"

	"github.com/inferbench/inferbench/result"
)

func TestEnergyFromReport(t *testing.T) {
	r := &result.Resources{Metrics: []result.Aggregate{{Name: "cpu_energy_j", Value: 5}, {Name: "dram_energy_j", Value: 1}, {Name: "gpu_energy_j", Value: 7}}}
	e := EnergyFromReport(r)
	if e.Total() != 13 || len(e.Sources) != 2 {
		t.Errorf("energy = %+v", e)
	}
}

func TestEnergyDelta(t *testing.T) {
	for _, tc := range []struct {
		name                string
		prev, cur, maxRange uint64
		want                float64
	}{
		{"no wrap", 100, 250, 1000, 150},
		{"unchanged", 100, 100, 1000, 0},
		{"one wrap", 900, 50, 1000, 150},
		{"wrap landing on zero", 1000, 0, 1000, 0},
		{"wrap without a known range counts nothing", 900, 50, 0, 0},
		{"previous above the range (bad reading) counts nothing", 2000, 50, 1000, 0},
	} {
		if got := EnergyDelta(tc.prev, tc.cur, tc.maxRange); got != tc.want {
			t.Errorf("%s: EnergyDelta(%d, %d, %d) = %v, want %v", tc.name, tc.prev, tc.cur, tc.maxRange, got, tc.want)
		}
	}
}
