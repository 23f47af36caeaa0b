package monitor

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestCO2e(t *testing.T) {
	for _, tc := range []struct {
		name   string
		grid   Grid
		joules float64
		want   float64
	}{
		{"one kWh at the default", DefaultGrid, 3.6e6, 475},
		{"PUE scales", Grid{IntensityGPerKWh: 475, PUE: 1.5}, 3.6e6, 712.5},
		{"zero PUE means 1", Grid{IntensityGPerKWh: 100}, 36e3, 1},
		{"clean grid", Grid{IntensityGPerKWh: 0, PUE: 1.2}, 1e9, 0},
	} {
		if got := tc.grid.CO2eGrams(tc.joules); !near(got, tc.want, 1e-9) {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
}

func TestGridValidate(t *testing.T) {
	if err := DefaultGrid.Validate(); err != nil {
		t.Error(err)
	}
	if err := (Grid{IntensityGPerKWh: 400, PUE: 0.9}).Validate(); err == nil {
		t.Error("PUE below 1 accepted")
	}
	if err := (Grid{IntensityGPerKWh: -1, PUE: 1}).Validate(); err == nil {
		t.Error("negative intensity accepted")
	}
}

func TestEnergyMetrics(t *testing.T) {
	for _, tc := range []struct {
		name          string
		e             Energy
		items, tokens int
		want          []Value
	}{
		{"nothing measured", Energy{}, 10, 10, nil},
		{"cpu and gpu, items and tokens", Energy{CPUJ: 100, GPUJ: 260, Sources: []string{"rapl", "gpu"}}, 36, 1800, []Value{
			{"energy_j", 360}, {"co2e_g", 360 / 3.6e6 * 475}, {"energy_per_item_j", 10},
			{"energy_per_token_j", 0.2}, {"co2e_per_1k_tokens_g", 200 / 3.6e6 * 475}}},
		{"no items, no tokens", Energy{GPUJ: 36, Sources: []string{"gpu"}}, 0, 0, []Value{{"energy_j", 36}, {"co2e_g", 36 / 3.6e6 * 475}}},
	} {
		got := EnergyMetrics(tc.e, tc.items, tc.tokens, DefaultGrid)
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestEnergyFromReport(t *testing.T) {
	r := &Report{Metrics: []Aggregate{{Name: "cpu_energy_j", Value: 5}, {Name: "dram_energy_j", Value: 1}, {Name: "gpu_energy_j", Value: 7}}}
	e := EnergyFromReport(r)
	if e.Total() != 13 || len(e.Sources) != 2 {
		t.Errorf("energy = %+v", e)
	}
}

func ExampleGrid_CO2eGrams() {
	// 1.8 MJ (half a kWh) in a data centre with a PUE of 1.2 on a 300 g/kWh grid.
	g := Grid{IntensityGPerKWh: 300, PUE: 1.2}
	fmt.Printf("%.0f g CO2e\n", g.CO2eGrams(1.8e6))
	// Output: 180 g CO2e
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
