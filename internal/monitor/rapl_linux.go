package monitor

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/procfs/sysfs"
)

// RAPLSampler reads CPU package energy from the RAPL counters under /sys/class/powercap (Intel,
// and AMD since Linux 5.8). It sums the top-level "package" zones, and reports DRAM zones apart
// where the CPU has them; core, uncore and psys zones are left out because they overlap the
// package. The counters measure whole sockets, not the process under test.
//
// Gauges: cpu_power_w (and dram_power_w). Totals: cpu_energy_j (and dram_energy_j).
//
// Each counter wraps at max_energy_range_uj; a reading below the previous one is taken as one wrap.
// At 100 ms a wrap cannot be missed (a counter takes minutes to hours to go round).
type RAPLSampler struct {
	pkg, dram []*raplZone
	prevTime  time.Time
}

type raplZone struct {
	zone  sysfs.RaplZone
	last  uint64
	total float64 // joules since Start
	have  bool
}

var _ Sampler = (*RAPLSampler)(nil)

// NewRAPLSampler returns a sampler over the sysfs mounted at root ("" means /sys). It wraps
// ErrNotAvailable when the machine has no RAPL zones or their counters are not readable (since
// Linux 5.10 energy_uj is readable by root only).
func NewRAPLSampler(root string) (*RAPLSampler, error) {
	if root == "" {
		root = sysfs.DefaultMountPoint
	}
	sfs, err := sysfs.NewFS(root)
	if err != nil {
		return nil, fmt.Errorf("rapl: %w: %w", ErrNotAvailable, err)
	}
	zones, err := sysfs.GetRaplZones(sfs)
	if err != nil {
		return nil, fmt.Errorf("rapl: %w: no powercap zones (%v)", ErrNotAvailable, err)
	}
	s := &RAPLSampler{}
	for _, z := range zones {
		dir := filepath.Base(z.Path)
		// Top-level zones are intel-rapl:N; intel-rapl:N:M are their subzones and
		// intel-rapl-mmio:N duplicates the package through another interface.
		if !strings.HasPrefix(dir, "intel-rapl:") {
			continue
		}
		top := strings.Count(dir, ":") == 1
		switch {
		case z.Name == "package" && top:
			s.pkg = append(s.pkg, &raplZone{zone: z})
		case z.Name == "dram":
			s.dram = append(s.dram, &raplZone{zone: z})
		}
	}
	if len(s.pkg) == 0 {
		return nil, fmt.Errorf("rapl: %w: no package zone under %s", ErrNotAvailable, filepath.Join(root, "class/powercap"))
	}
	for _, z := range append(append([]*raplZone(nil), s.pkg...), s.dram...) {
		if _, err := z.zone.GetEnergyMicrojoules(); err != nil {
			return nil, fmt.Errorf("rapl: %w: %v (energy counters are readable by root only on recent kernels)", ErrNotAvailable, err)
		}
	}
	return s, nil
}

// Name implements Sampler.
func (s *RAPLSampler) Name() string { return "rapl" }

// Metrics implements Sampler.
func (s *RAPLSampler) Metrics() []Metric {
	m := []Metric{
		{Name: "cpu_power_w", Unit: "W", Better: Lower, Kind: Gauge, Help: "CPU package power (RAPL), all sockets"},
		{Name: "cpu_energy_j", Unit: "J", Better: Lower, Kind: Total, Help: "CPU package energy (RAPL) in the window, all sockets"},
	}
	if len(s.dram) > 0 {
		m = append(m,
			Metric{Name: "dram_power_w", Unit: "W", Better: Lower, Kind: Gauge, Help: "DRAM power (RAPL)"},
			Metric{Name: "dram_energy_j", Unit: "J", Better: Lower, Kind: Total, Help: "DRAM energy (RAPL) in the window"})
	}
	return m
}

// Start implements Starter: the counters' baselines.
func (s *RAPLSampler) Start(now time.Time) error {
	for _, z := range append(append([]*raplZone(nil), s.pkg...), s.dram...) {
		z.total, z.have = 0, false
	}
	s.prevTime = time.Time{}
	return nil
}

// Sample implements Sampler.
func (s *RAPLSampler) Sample(now time.Time, out []Value) ([]Value, error) {
	dpkg, err1 := readZones(s.pkg)
	ddram, err2 := readZones(s.dram)
	if !s.prevTime.IsZero() {
		if dt := now.Sub(s.prevTime).Seconds(); dt > 0 {
			out = append(out, Value{"cpu_power_w", dpkg / dt})
			if len(s.dram) > 0 {
				out = append(out, Value{"dram_power_w", ddram / dt})
			}
		}
	}
	s.prevTime = now
	if err1 != nil {
		return out, err1
	}
	return out, err2
}

// Stop implements Stopper.
func (s *RAPLSampler) Stop(now time.Time, out []Value) ([]Value, error) {
	out = append(out, Value{"cpu_energy_j", sumZones(s.pkg)})
	if len(s.dram) > 0 {
		out = append(out, Value{"dram_energy_j", sumZones(s.dram)})
	}
	return out, nil
}

// readZones reads each zone's counter and returns the joules added since the previous reading.
func readZones(zs []*raplZone) (float64, error) {
	var sum float64
	var firstErr error
	for _, z := range zs {
		uj, err := z.zone.GetEnergyMicrojoules()
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if z.have {
			d := EnergyDelta(z.last, uj, z.zone.MaxMicrojoules) / 1e6
			z.total += d
			sum += d
		}
		z.last, z.have = uj, true
	}
	return sum, firstErr
}

func sumZones(zs []*raplZone) float64 {
	var t float64
	for _, z := range zs {
		t += z.total
	}
	return t
}
