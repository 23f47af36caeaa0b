package monitor

import (
	"fmt"
	"math"
)

// Grid describes the electricity behind a measurement, for the CO2e estimate.
type Grid struct {
	// IntensityGPerKWh is the carbon intensity of the electricity in grams of CO2-equivalent per
	// kilowatt-hour. The default, 475, is the IEA's global average; use your region's figure.
	IntensityGPerKWh float64 `json:"intensity_g_per_kwh" yaml:"intensity_g_per_kwh"`
	// PUE is the data centre's power usage effectiveness: facility energy over IT energy. The
	// default, 1.0, counts only the energy measured at the devices (a workstation, or a figure
	// to be scaled later); set 1.1–1.6 for a data centre.
	PUE float64 `json:"pue" yaml:"pue"`
}

// DefaultGrid is 475 g/kWh at a PUE of 1.0.
var DefaultGrid = Grid{IntensityGPerKWh: 475, PUE: 1.0}

// Validate reports an intensity or PUE that cannot be right.
func (g Grid) Validate() error {
	if g.IntensityGPerKWh < 0 || math.IsNaN(g.IntensityGPerKWh) {
		return fmt.Errorf("grid intensity %v g/kWh: must be zero or more", g.IntensityGPerKWh)
	}
	if g.PUE < 1 || math.IsNaN(g.PUE) {
		return fmt.Errorf("PUE %v: must be 1.0 or more (facility energy over IT energy)", g.PUE)
	}
	return nil
}

// CO2eGrams returns the grams of CO2-equivalent for joules measured at the devices:
// joules / 3.6e6 (kWh) × PUE × intensity.
func (g Grid) CO2eGrams(joules float64) float64 {
	pue := g.PUE
	if pue == 0 {
		pue = 1
	}
	return joules / 3.6e6 * pue * g.IntensityGPerKWh
}

// Energy is the energy of one window, split by source. A source that was not measured is zero
// and absent from Sources.
type Energy struct {
	CPUJ    float64  // CPU packages (RAPL)
	DRAMJ   float64  // DRAM (RAPL), where the CPU reports it
	GPUJ    float64  // GPUs (NVML counter, or power integrated over the samples)
	Sources []string // "rapl", "gpu": what was measured
}

// Total returns the measured energy of all sources in joules.
func (e Energy) Total() float64 { return e.CPUJ + e.DRAMJ + e.GPUJ }

// EnergyFromReport gathers the energy totals a Monitor's samplers reported.
func EnergyFromReport(r *Report) Energy {
	var e Energy
	if a, ok := r.Get("cpu_energy_j"); ok {
		e.CPUJ = a.Value
		e.Sources = append(e.Sources, "rapl")
	}
	if a, ok := r.Get("dram_energy_j"); ok {
		e.DRAMJ = a.Value
	}
	if a, ok := r.Get("gpu_energy_j"); ok {
		e.GPUJ = a.Value
		e.Sources = append(e.Sources, "gpu")
	}
	return e
}

// PerUnit divides joules by a count of items or tokens; ok is false when there are none.
func PerUnit(joules float64, n float64) (perUnit float64, ok bool) {
	if n <= 0 || math.IsNaN(n) || math.IsNaN(joules) {
		return 0, false
	}
	return joules / n, true
}

// EnergyMetrics returns the derived energy figures of a window: energy_j (all measured sources),
// energy_per_item_j, energy_per_token_j (output tokens), and co2e_g and co2e_per_1k_tokens_g.
// Figures that cannot be formed (no energy source, no items, no tokens) are left out.
func EnergyMetrics(e Energy, items, outputTokens int, g Grid) []Value {
	if len(e.Sources) == 0 {
		return nil
	}
	j := e.Total()
	out := []Value{{"energy_j", j}, {"co2e_g", g.CO2eGrams(j)}}
	if v, ok := PerUnit(j, float64(items)); ok {
		out = append(out, Value{"energy_per_item_j", v})
	}
	if v, ok := PerUnit(j, float64(outputTokens)); ok {
		out = append(out, Value{"energy_per_token_j", v}, Value{"co2e_per_1k_tokens_g", g.CO2eGrams(v * 1000)})
	}
	return out
}

// EnergyMetricSpecs describes the figures EnergyMetrics returns.
func EnergyMetricSpecs() []Metric {
	return []Metric{
		{Name: "energy_j", Unit: "J", Better: Lower, Kind: Total, Help: "energy of all measured sources (CPU package, DRAM, GPU) in the measured window"},
		{Name: "energy_per_item_j", Unit: "J", Better: Lower, Kind: Total, Help: "energy_j divided by items processed"},
		{Name: "energy_per_token_j", Unit: "J", Better: Lower, Kind: Total, Help: "energy_j divided by output tokens"},
		{Name: "co2e_g", Unit: "g", Better: Lower, Kind: Total, Help: "energy_j × PUE × grid intensity, in grams of CO2-equivalent"},
		{Name: "co2e_per_1k_tokens_g", Unit: "g", Better: Lower, Kind: Total, Help: "co2e_g per 1000 output tokens"},
	}
}

// EnergyDelta returns the increase of a wrapping energy counter from prev to cur, where the counter
// goes from 0 to maxRange inclusive and then starts again at 0. A reading below the previous one
// is one wrap; with no range known it counts as zero rather than a huge jump.
func EnergyDelta(prev, cur, maxRange uint64) float64 {
	if cur >= prev {
		return float64(cur - prev)
	}
	if maxRange == 0 || prev > maxRange {
		return 0
	}
	return float64(maxRange-prev) + float64(cur)
}
