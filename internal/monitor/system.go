package monitor

import (
	"fmt"
	"time"

	"github.com/prometheus/procfs"
)

// SystemSampler samples the whole machine: CPU utilisation over all cores, memory in use and the
// one-minute load average. It shows what else competes with the subject.
//
// Gauges: sys_cpu_pct, sys_mem_used_mb, sys_load1.
//
// It samples at most every Period (DefaultSystemPeriod) whatever the monitor's interval: these are
// context figures, and /proc/stat is expensive to generate on machines with many cores and
// interrupts.
type SystemSampler struct {
	Period time.Duration

	fs   procfs.FS
	prev procfs.CPUStat
	have bool
	last time.Time
}

// DefaultSystemPeriod is the system sampler's shortest period.
const DefaultSystemPeriod = time.Second

var _ Sampler = (*SystemSampler)(nil)

// NewSystemSampler returns a sampler reading the procfs mounted at root ("" means /proc).
func NewSystemSampler(root string) (*SystemSampler, error) {
	pfs, _, err := openProc(root, "system monitor")
	if err != nil {
		return nil, err
	}
	return &SystemSampler{fs: pfs, Period: DefaultSystemPeriod}, nil
}

// openProc opens the procfs mounted at root ("" means /proc) and returns it with the root used;
// the error, prefixed with what, wraps ErrNotAvailable.
func openProc(root, what string) (procfs.FS, string, error) {
	if root == "" {
		root = procfs.DefaultMountPoint
	}
	pfs, err := procfs.NewFS(root)
	if err != nil {
		return procfs.FS{}, root, fmt.Errorf("%s: %w: %w", what, ErrNotAvailable, err)
	}
	return pfs, root, nil
}

// Name implements Sampler.
func (s *SystemSampler) Name() string { return "system" }

// Metrics implements Sampler.
func (s *SystemSampler) Metrics() []Metric {
	return []Metric{
		{Name: "sys_cpu_pct", Unit: "%", Kind: Gauge, Help: "busy CPU time of the whole machine, percent of all cores"},
		{Name: "sys_mem_used_mb", Unit: "MB", Kind: Gauge, Help: "memory in use on the machine: MemTotal - MemAvailable"},
		{Name: "sys_load1", Unit: "count", Kind: Gauge, Help: "one-minute load average"},
	}
}

// Start implements Starter: the CPU baseline.
func (s *SystemSampler) Start(time.Time) error {
	s.have, s.last = false, time.Time{}
	return nil
}

// Sample implements Sampler.
func (s *SystemSampler) Sample(now time.Time, out []Value) ([]Value, error) {
	if !s.last.IsZero() && now.Sub(s.last) < s.Period {
		return out, nil
	}
	s.last = now
	var firstErr error
	keep := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	if st, err := s.fs.Stat(); err == nil {
		c := st.CPUTotal
		if s.have {
			busy := cpuBusy(c) - cpuBusy(s.prev)
			all := busy + (c.Idle + c.Iowait) - (s.prev.Idle + s.prev.Iowait)
			if all > 0 {
				out = append(out, Value{"sys_cpu_pct", 100 * max(0, busy) / all})
			}
		}
		s.prev, s.have = c, true
	} else {
		keep(err)
	}
	if mi, err := s.fs.Meminfo(); err == nil {
		if mi.MemTotal != nil && mi.MemAvailable != nil {
			out = append(out, Value{"sys_mem_used_mb", float64(*mi.MemTotal-*mi.MemAvailable) * 1024 / mib})
		}
	} else {
		keep(err)
	}
	if la, err := s.fs.LoadAvg(); err == nil {
		out = append(out, Value{"sys_load1", la.Load1})
	} else {
		keep(err)
	}
	return out, firstErr
}

// cpuBusy is the time not spent idle. Guest time is already inside user time and is not added.
func cpuBusy(c procfs.CPUStat) float64 {
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
}
