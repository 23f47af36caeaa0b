//go:build linux && cgo && !nonvml

package gpu

import (
	"fmt"
	"math"
	"strconv"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlAvailable says whether this build can use NVML.
const nvmlAvailable = true

// nvmlBackend reads GPUs through NVML, loaded at run time from libnvidia-ml.so.1.
type nvmlBackend struct {
	lib     nvml.Interface
	handles []nvml.Device
	devs    []Info
}

func openNVML(path string) (backend, error) {
	var opts []nvml.LibraryOption
	if path != "" {
		opts = append(opts, nvml.WithLibraryPath(path))
	}
	return newNVML(nvml.New(opts...))
}

// newNVML initialises lib and describes its devices; tests pass go-nvml's mock.
func newNVML(lib nvml.Interface) (*nvmlBackend, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("nvml: init: %v", ret)
	}
	b := &nvmlBackend{lib: lib}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		lib.Shutdown()
		return nil, fmt.Errorf("nvml: device count: %v", ret)
	}
	if n == 0 {
		lib.Shutdown()
		return nil, fmt.Errorf("nvml: no devices")
	}
	driver, _ := lib.SystemGetDriverVersion()
	cuda := ""
	if v, ret := lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		cuda = cudaVersion(v)
	}
	for i := 0; i < n; i++ {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			lib.Shutdown()
			return nil, fmt.Errorf("nvml: device %d: %v", i, ret)
		}
		info := Info{Index: i, Driver: driver, CUDA: cuda, Source: "nvml"}
		info.Name, _ = d.GetName()
		info.UUID, _ = d.GetUUID()
		if m, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
			info.MemoryMB = float64(m.Total) / (1 << 20)
		}
		if mw, ret := d.GetEnforcedPowerLimit(); ret == nvml.SUCCESS {
			info.PowerLimitW = float64(mw) / 1e3
		}
		if cur, _, ret := d.GetMigMode(); ret == nvml.SUCCESS {
			info.MIG = enabled(cur == nvml.DEVICE_MIG_ENABLE)
		}
		if cur, _, ret := d.GetEccMode(); ret == nvml.SUCCESS {
			info.ECC = enabled(cur == nvml.FEATURE_ENABLED)
		}
		if major, minor, ret := d.GetCudaComputeCapability(); ret == nvml.SUCCESS {
			info.ComputeCap = strconv.Itoa(major) + "." + strconv.Itoa(minor)
		}
		b.handles = append(b.handles, d)
		b.devs = append(b.devs, info)
	}
	return b, nil
}

func enabled(on bool) string {
	if on {
		return "enabled"
	}
	return "disabled"
}

// cudaVersion turns NVML's 12040 into "12.4".
func cudaVersion(v int) string {
	return strconv.Itoa(v/1000) + "." + strconv.Itoa(v%1000/10)
}

func (b *nvmlBackend) devices() []Info { return b.devs }

func (b *nvmlBackend) read(i int) (Reading, error) {
	if i < 0 || i >= len(b.handles) {
		return Reading{}, fmt.Errorf("no device %d", i)
	}
	d := b.handles[i]
	r := nanReading()
	var firstErr nvml.Return = nvml.SUCCESS
	note := func(ret nvml.Return) bool {
		if ret == nvml.SUCCESS {
			return true
		}
		if ret != nvml.ERROR_NOT_SUPPORTED && firstErr == nvml.SUCCESS {
			firstErr = ret
		}
		return false
	}
	if u, ret := d.GetUtilizationRates(); note(ret) {
		r.UtilPct = float64(u.Gpu)
	}
	if m, ret := d.GetMemoryInfo(); note(ret) {
		r.MemUsedMB = float64(m.Used) / (1 << 20)
	}
	if mw, ret := d.GetPowerUsage(); note(ret) {
		r.PowerW = float64(mw) / 1e3
	}
	if t, ret := d.GetTemperature(nvml.TEMPERATURE_GPU); note(ret) {
		r.TempC = float64(t)
	}
	if c, ret := d.GetClockInfo(nvml.CLOCK_SM); note(ret) {
		r.SMClockMHz = float64(c)
	}
	if c, ret := d.GetClockInfo(nvml.CLOCK_MEM); note(ret) {
		r.MemClockMHz = float64(c)
	}
	if firstErr != nvml.SUCCESS && math.IsNaN(r.UtilPct) && math.IsNaN(r.MemUsedMB) && math.IsNaN(r.PowerW) {
		return r, fmt.Errorf("nvml: %v", firstErr)
	}
	return r, nil
}

func (b *nvmlBackend) clockEvents(i int) (uint64, bool) {
	if i < 0 || i >= len(b.handles) {
		return 0, false
	}
	bits, ret := b.handles[i].GetCurrentClocksEventReasons()
	if ret == nvml.ERROR_FUNCTION_NOT_FOUND || ret == nvml.ERROR_NOT_SUPPORTED {
		bits, ret = b.handles[i].GetCurrentClocksThrottleReasons() // drivers before 535
	}
	return bits, ret == nvml.SUCCESS
}

func (b *nvmlBackend) processes(i int) ([]int, bool) {
	if i < 0 || i >= len(b.handles) {
		return nil, false
	}
	ps, ret := b.handles[i].GetComputeRunningProcesses()
	if ret != nvml.SUCCESS {
		return nil, false
	}
	out := make([]int, len(ps))
	for j, p := range ps {
		out[j] = int(p.Pid)
	}
	return out, true
}

func (b *nvmlBackend) powerLimits(i int) (float64, float64, bool) {
	if i < 0 || i >= len(b.handles) {
		return 0, 0, false
	}
	e, ret := b.handles[i].GetEnforcedPowerLimit()
	if ret != nvml.SUCCESS {
		return 0, 0, false
	}
	d, ret := b.handles[i].GetPowerManagementDefaultLimit()
	if ret != nvml.SUCCESS {
		d = e
	}
	return float64(e) / 1e3, float64(d) / 1e3, true
}

func (b *nvmlBackend) energy(i int) (uint64, bool) {
	if i < 0 || i >= len(b.handles) {
		return 0, false
	}
	mj, ret := b.handles[i].GetTotalEnergyConsumption()
	return mj, ret == nvml.SUCCESS
}

func (b *nvmlBackend) close() error {
	if b.lib == nil {
		return nil
	}
	ret := b.lib.Shutdown()
	b.lib = nil
	if ret != nvml.SUCCESS {
		return fmt.Errorf("nvml: shutdown: %v", ret)
	}
	return nil
}
