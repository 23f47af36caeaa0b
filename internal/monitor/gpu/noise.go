package gpu

import (
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferbench/inferbench/result"
)

// Clock event ("throttle") reasons, NVML's nvmlClocksEventReason bits.
const (
	ReasonGPUIdle           = 0x1
	ReasonAppClocksSetting  = 0x2
	ReasonSWPowerCap        = 0x4
	ReasonHWSlowdown        = 0x8
	ReasonSyncBoost         = 0x10
	ReasonSWThermalSlowdown = 0x20
	ReasonHWThermalSlowdown = 0x40
	ReasonHWPowerBrake      = 0x80
	ReasonDisplayClock      = 0x100
)

var reasonNames = []struct {
	bit  uint64
	name string
	slow bool // it lowers clocks under load: a cause of noise worth a warning
}{
	{ReasonGPUIdle, "gpu_idle", false},
	{ReasonAppClocksSetting, "applications_clocks_setting", true},
	{ReasonSWPowerCap, "sw_power_cap", true},
	{ReasonHWSlowdown, "hw_slowdown", true},
	{ReasonSyncBoost, "sync_boost", false},
	{ReasonSWThermalSlowdown, "sw_thermal_slowdown", true},
	{ReasonHWThermalSlowdown, "hw_thermal_slowdown", true},
	{ReasonHWPowerBrake, "hw_power_brake_slowdown", true},
	{ReasonDisplayClock, "display_clock_setting", false},
}

// noiseReader is an optional ability of a backend (NVML): what explains latency noise on a GPU.
type noiseReader interface {
	// clockEvents returns the device's current clock event reasons (a bit set).
	clockEvents(i int) (uint64, bool)
	// processes returns the PIDs of the compute processes on the device.
	processes(i int) ([]int, bool)
	// powerLimits returns the enforced and the default power limit in W.
	powerLimits(i int) (enforcedW, defaultW float64, ok bool)
}

// noiseState accumulates a window's result.GPUNoise: what the GPU monitor saw that explains
// latency noise.
type noiseState struct {
	n         result.GPUNoise
	mask      map[string]int
	procs     map[int]string
	lastProcs time.Time
}

func (st *noiseState) reset(s *Sampler) {
	st.n = result.GPUNoise{SMClockMinMHz: math.Inf(1), MemClockMinMHz: math.Inf(1)}
	st.mask = map[string]int{}
	st.procs = map[int]string{}
	st.lastProcs = time.Time{}
	nr, ok := s.b.(noiseReader)
	if !ok {
		st.n.Unavailable = "clock event reasons and GPU processes need NVML (nvidia-smi fallback in use)"
		return
	}
	for _, d := range s.devs {
		if e, def, ok := nr.powerLimits(d.Index); ok {
			st.n.PowerLimitW += e
			st.n.DefaultLimitW += def
		}
	}
}

// processEvery bounds how often the process list is read (it costs more than a clock read).
const processEvery = time.Second

func (st *noiseState) sample(s *Sampler, now time.Time) {
	st.n.Samples++
	for _, r := range s.readings {
		if !math.IsNaN(r.SMClockMHz) {
			st.n.SMClockMinMHz = min(st.n.SMClockMinMHz, r.SMClockMHz)
			st.n.SMClockMaxMHz = max(st.n.SMClockMaxMHz, r.SMClockMHz)
		}
		if !math.IsNaN(r.MemClockMHz) {
			st.n.MemClockMinMHz = min(st.n.MemClockMinMHz, r.MemClockMHz)
			st.n.MemClockMaxMHz = max(st.n.MemClockMaxMHz, r.MemClockMHz)
		}
	}
	nr, ok := s.b.(noiseReader)
	if !ok {
		return
	}
	var seen uint64
	for _, d := range s.devs {
		if bits, ok := nr.clockEvents(d.Index); ok {
			seen |= bits
		}
	}
	for _, r := range reasonNames {
		if seen&r.bit != 0 {
			st.mask[r.name]++
		}
	}
	if st.lastProcs.IsZero() || now.Sub(st.lastProcs) >= processEvery {
		st.lastProcs = now
		for _, d := range s.devs {
			pids, _ := nr.processes(d.Index)
			for _, p := range pids {
				if _, ok := st.procs[p]; !ok {
					st.procs[p] = processName(p)
				}
			}
		}
	}
}

func (st *noiseState) noise() result.GPUNoise {
	n := st.n
	if math.IsInf(n.SMClockMinMHz, 1) {
		n.SMClockMinMHz = 0
	}
	if math.IsInf(n.MemClockMinMHz, 1) {
		n.MemClockMinMHz = 0
	}
	if len(st.mask) > 0 {
		n.Reasons = st.mask
	}
	for _, p := range slices.Sorted(maps.Keys(st.procs)) {
		n.Processes = append(n.Processes, strings.TrimSpace(strconv.Itoa(p)+" "+st.procs[p]))
	}
	return n
}

// processName reads a process's command name (Linux), or "" (another PID namespace, gone).
func processName(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// noiseWarnings names each cause of noise seen: clocks lowered under load (power cap, thermal or
// hardware slowdown, application clocks) in some share of the samples, an SM clock that moved by
// more than 10%, more than one process on the GPUs, a power limit below the default.
func noiseWarnings(n result.GPUNoise) []string {
	var out []string
	if n.Samples > 0 {
		var slow []string
		for _, r := range reasonNames {
			if c := n.Reasons[r.name]; c > 0 && r.slow {
				slow = append(slow, fmt.Sprintf("%s in %d%% of samples", r.name, (100*c+n.Samples/2)/n.Samples))
			}
		}
		if len(slow) > 0 {
			out = append(out, "gpu noise: clocks lowered by "+strings.Join(slow, ", ")+
				fmt.Sprintf(" (SM clock %.0f-%.0f MHz)", n.SMClockMinMHz, n.SMClockMaxMHz))
		} else if n.SMClockMaxMHz > 0 && n.SMClockMaxMHz-n.SMClockMinMHz > 0.1*n.SMClockMaxMHz {
			out = append(out, fmt.Sprintf("gpu noise: SM clock ranged %.0f-%.0f MHz in the window (no throttle reason seen: boost or idle downclocking; lock clocks with nvidia-smi -lgc for steadier figures)", n.SMClockMinMHz, n.SMClockMaxMHz))
		}
	}
	if len(n.Processes) > 1 {
		out = append(out, fmt.Sprintf("gpu noise: %d processes used the GPU in the window (%s): they compete for it", len(n.Processes), strings.Join(n.Processes, ", ")))
	}
	if n.DefaultLimitW > 0 && n.PowerLimitW > 0 && n.PowerLimitW < 0.98*n.DefaultLimitW {
		out = append(out, fmt.Sprintf("gpu noise: power limit %.0f W is below the default %.0f W", n.PowerLimitW, n.DefaultLimitW))
	}
	return out
}

// Explain implements monitor.Explainer: the window's GPU noise (run.json's
// extra.resources.details.gpu_noise) and its warnings.
func (s *Sampler) Explain(d *result.ResourceDetails) []string {
	n := s.noise.noise()
	d.GPUNoise = &n
	return noiseWarnings(n)
}
