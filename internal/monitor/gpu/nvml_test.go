//go:build linux && cgo && !nonvml

package gpu

import (
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/google/go-cmp/cmp"
)

// mockDevice is an H100-like device through go-nvml's mock of the NVML interface.
func mockDevice(energyMJ *uint64, energyRet nvml.Return) *mock.Device {
	return &mock.Device{
		GetNameFunc:               func() (string, nvml.Return) { return "NVIDIA H100 80GB HBM3", nvml.SUCCESS },
		GetUUIDFunc:               func() (string, nvml.Return) { return "GPU-1234", nvml.SUCCESS },
		GetMemoryInfoFunc:         func() (nvml.Memory, nvml.Return) { return nvml.Memory{Total: 80 << 30, Used: 12 << 30}, nvml.SUCCESS },
		GetEnforcedPowerLimitFunc: func() (uint32, nvml.Return) { return 700_000, nvml.SUCCESS },
		GetMigModeFunc:            func() (int, int, nvml.Return) { return nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_DISABLE, nvml.SUCCESS },
		GetEccModeFunc: func() (nvml.EnableState, nvml.EnableState, nvml.Return) {
			return nvml.FEATURE_ENABLED, nvml.FEATURE_ENABLED, nvml.SUCCESS
		},
		GetCudaComputeCapabilityFunc: func() (int, int, nvml.Return) { return 9, 0, nvml.SUCCESS },
		GetUtilizationRatesFunc:      func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 87, Memory: 40}, nvml.SUCCESS },
		GetPowerUsageFunc:            func() (uint32, nvml.Return) { return 512_345, nvml.SUCCESS },
		GetTemperatureFunc:           func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 66, nvml.SUCCESS },
		GetClockInfoFunc: func(c nvml.ClockType) (uint32, nvml.Return) {
			if c == nvml.CLOCK_SM {
				return 1980, nvml.SUCCESS
			}
			return 2619, nvml.SUCCESS
		},
		GetTotalEnergyConsumptionFunc: func() (uint64, nvml.Return) { return *energyMJ, energyRet },
		GetCurrentClocksEventReasonsFunc: func() (uint64, nvml.Return) {
			return nvml.ClocksEventReasonSwPowerCap, nvml.SUCCESS
		},
		GetCurrentClocksThrottleReasonsFunc: func() (uint64, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED },
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			return []nvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: 1 << 30}}, nvml.SUCCESS
		},
		GetPowerManagementDefaultLimitFunc: func() (uint32, nvml.Return) { return 700_000, nvml.SUCCESS },
	}
}

// TestNVMLNoise reads the clock event reasons, processes and power limits through NVML.
func TestNVMLNoise(t *testing.T) {
	energy := uint64(0)
	b, err := newNVML(mockLib(mockDevice(&energy, nvml.SUCCESS)))
	if err != nil {
		t.Fatal(err)
	}
	if bits, ok := b.clockEvents(0); !ok || bits != ReasonSWPowerCap {
		t.Errorf("clock events %#x, %v", bits, ok)
	}
	if pids, ok := b.processes(0); !ok || len(pids) != 1 || pids[0] != 4242 {
		t.Errorf("processes %v, %v", pids, ok)
	}
	if e, d, ok := b.powerLimits(0); !ok || e != 700 || d != 700 {
		t.Errorf("power limits %v %v %v", e, d, ok)
	}
}

func mockLib(devs ...nvml.Device) *mock.Interface {
	return &mock.Interface{
		InitFunc:                       func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:                   func() nvml.Return { return nvml.SUCCESS },
		DeviceGetCountFunc:             func() (int, nvml.Return) { return len(devs), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc:     func(i int) (nvml.Device, nvml.Return) { return devs[i], nvml.SUCCESS },
		SystemGetDriverVersionFunc:     func() (string, nvml.Return) { return "550.54.15", nvml.SUCCESS },
		SystemGetCudaDriverVersionFunc: func() (int, nvml.Return) { return 12040, nvml.SUCCESS },
	}
}

func TestNVMLBackend(t *testing.T) {
	energy := uint64(1_000_000)
	lib := mockLib(mockDevice(&energy, nvml.SUCCESS))
	b, err := newNVML(lib)
	if err != nil {
		t.Fatal(err)
	}
	want := []Info{{Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-1234", MemoryMB: 81920, Driver: "550.54.15",
		CUDA: "12.4", PowerLimitW: 700, MIG: "disabled", ECC: "enabled", ComputeCap: "9.0", Source: "nvml"}}
	if diff := cmp.Diff(want, b.devices()); diff != "" {
		t.Errorf("devices (-want +got):\n%s", diff)
	}
	r, err := b.read(0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Reading{UtilPct: 87, MemUsedMB: 12 << 10, PowerW: 512.345, TempC: 66, SMClockMHz: 1980, MemClockMHz: 2619}, r); diff != "" {
		t.Errorf("reading (-want +got):\n%s", diff)
	}
	if mj, ok := b.energy(0); !ok || mj != 1_000_000 {
		t.Errorf("energy = %v, %v", mj, ok)
	}
	if err := b.close(); err != nil || len(lib.ShutdownCalls()) != 1 {
		t.Errorf("close: %v, %d shutdowns", err, len(lib.ShutdownCalls()))
	}
}

// TestNVMLEnergyCounter: on Volta and newer gpu_energy_j is the counter's difference.
func TestNVMLEnergyCounter(t *testing.T) {
	energy := uint64(5_000_000)
	b, err := newNVML(mockLib(mockDevice(&energy, nvml.SUCCESS)))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newSampler(b, nil)
	t0 := testTime(0)
	s.Start(t0)
	s.Sample(t0, nil)
	energy += 123_456 // 123.456 J
	s.Sample(testTime(1), nil)
	tot, _ := s.Stop(testTime(1), nil)
	if got := values(tot)["gpu_energy_j"]; got != 123.456 || s.EnergySource() != "counter" {
		t.Errorf("gpu_energy_j = %v from %s, want 123.456 from the counter", got, s.EnergySource())
	}
}

// TestNVMLNoEnergyCounter: before Volta the counter is not supported and power is integrated.
func TestNVMLNoEnergyCounter(t *testing.T) {
	energy := uint64(0)
	b, _ := newNVML(mockLib(mockDevice(&energy, nvml.ERROR_NOT_SUPPORTED)))
	s, _ := newSampler(b, nil)
	s.Start(testTime(0))
	s.Sample(testTime(0), nil)
	s.Sample(testTime(2), nil)
	tot, _ := s.Stop(testTime(2), nil)
	if got := values(tot)["gpu_energy_j"]; !near(got, 2*512.345) || s.EnergySource() != "integrated" {
		t.Errorf("gpu_energy_j = %v from %s, want %v integrated", got, s.EnergySource(), 2*512.345)
	}
}

func TestNVMLInitFails(t *testing.T) {
	lib := &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }}
	if _, err := newNVML(lib); err == nil {
		t.Error("init failure not reported")
	}
}

func TestCUDAVersion(t *testing.T) {
	for v, want := range map[int]string{12040: "12.4", 11080: "11.8", 13000: "13.0", 12090: "12.9"} {
		if got := cudaVersion(v); got != want {
			t.Errorf("cudaVersion(%d) = %q, want %q", v, got, want)
		}
	}
}

// BenchmarkSampleNVMLMock is one GPU sample through the NVML adapter over go-nvml's mock: the cost
// of our side of six NVML calls. On a real GPU each call enters the driver; measure it there with
// the same benchmark and the real library (see docs/results-gpu.md).
func BenchmarkSampleNVMLMock(b *testing.B) {
	energy := uint64(0)
	dev := mockDevice(&energy, nvml.SUCCESS)
	be, err := newNVML(mockLib(dev))
	if err != nil {
		b.Fatal(err)
	}
	s, _ := newSampler(be, nil)
	s.Start(testTime(0))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Sample(testTime(i), nil)
	}
}

// TestNVMLReal samples a real GPU through NVML when the machine has one; it is skipped otherwise.
func TestNVMLReal(t *testing.T) {
	b, err := openNVML("")
	if err != nil {
		t.Skipf("no NVML here: %v", err)
	}
	defer b.close()
	for _, d := range b.devices() {
		r, err := b.read(d.Index)
		if err != nil {
			t.Errorf("gpu %d: %v", d.Index, err)
			continue
		}
		mj, counter := b.energy(d.Index)
		t.Logf("gpu %d %s (driver %s, CUDA %s, cc %s, %.0f MiB, limit %.0f W, MIG %q, ECC %q): util %.0f%%, mem %.0f MiB, %.1f W, %.0f °C, SM %.0f MHz, mem %.0f MHz; energy counter %v (%d mJ)",
			d.Index, d.Name, d.Driver, d.CUDA, d.ComputeCap, d.MemoryMB, d.PowerLimitW, d.MIG, d.ECC,
			r.UtilPct, r.MemUsedMB, r.PowerW, r.TempC, r.SMClockMHz, r.MemClockMHz, counter, mj)
		if r.MemUsedMB <= 0 || r.MemUsedMB > d.MemoryMB {
			t.Errorf("gpu %d: memory used %v of %v MiB", d.Index, r.MemUsedMB, d.MemoryMB)
		}
	}
}

// BenchmarkSampleNVMLReal is one sample of every GPU through the real NVML; skipped without one.
func BenchmarkSampleNVMLReal(b *testing.B) {
	be, err := openNVML("")
	if err != nil {
		b.Skipf("no NVML here: %v", err)
	}
	defer be.close()
	s, _ := newSampler(be, nil)
	s.Start(time.Now())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Sample(time.Now(), nil)
	}
}
