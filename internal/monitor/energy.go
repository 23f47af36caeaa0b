package monitor

import "github.com/inferbench/inferbench/result"

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
func EnergyFromReport(r *result.Resources) Energy {
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
