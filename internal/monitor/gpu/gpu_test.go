package gpu

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/inferbench/inferbench/internal/monitor"
)

// stub is a backend with programmable readings, the test double for NVML and nvidia-smi.
type stub struct {
	devs     []Info
	readings []Reading
	counter  []uint64 // mJ; nil: no energy counter
	fail     error
	closed   bool
}

func (s *stub) devices() []Info { return s.devs }
func (s *stub) read(i int) (Reading, error) {
	if s.fail != nil {
		return Reading{}, s.fail
	}
	return s.readings[i], nil
}
func (s *stub) energy(i int) (uint64, bool) {
	if s.counter == nil {
		return 0, false
	}
	return s.counter[i], true
}
func (s *stub) close() error { s.closed = true; return nil }

func values(vs []monitor.Value) map[string]float64 {
	m := map[string]float64{}
	for _, v := range vs {
		m[v.Name] = v.V
	}
	return m
}

func twoGPUs() *stub {
	return &stub{
		devs: []Info{{Index: 0, Name: "A"}, {Index: 1, Name: "B"}},
		readings: []Reading{
			{UtilPct: 90, MemUsedMB: 1000, PowerW: 300, TempC: 70, SMClockMHz: 1800, MemClockMHz: 2600},
			{UtilPct: 10, MemUsedMB: 500, PowerW: 100, TempC: 50, SMClockMHz: 1200, MemClockMHz: math.NaN()},
		},
	}
}

func TestSamplerCombinesDevices(t *testing.T) {
	s, err := newSampler(twoGPUs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Start(time.Unix(0, 0))
	vs, err := s.Sample(time.Unix(0, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := values(vs)
	want := map[string]float64{
		"gpu_util_pct": 50, "gpu_mem_used_mb": 1500, "gpu_power_w": 400, "gpu_temp_c": 70, "gpu_sm_clock_mhz": 1500, "gpu_mem_clock_mhz": 2600,
		"gpu0_util_pct": 90, "gpu0_mem_used_mb": 1000, "gpu0_power_w": 300, "gpu0_temp_c": 70, "gpu0_sm_clock_mhz": 1800, "gpu0_mem_clock_mhz": 2600,
		"gpu1_util_pct": 10, "gpu1_mem_used_mb": 500, "gpu1_power_w": 100, "gpu1_temp_c": 50, "gpu1_sm_clock_mhz": 1200, "gpu1_mem_clock_mhz": math.NaN(),
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("sample (-want +got):\n%s", diff)
	}
	names := map[string]bool{}
	for _, m := range s.Metrics() {
		names[m.Name] = true
	}
	for n := range want {
		if !names[n] {
			t.Errorf("%s is sampled but not declared in Metrics", n)
		}
	}
}

func TestSamplerOneDeviceHasNoPerDeviceNames(t *testing.T) {
	b := twoGPUs()
	s, err := newSampler(b, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	vs, _ := s.Sample(time.Unix(0, 0), nil)
	got := values(vs)
	if _, ok := got["gpu1_util_pct"]; ok || got["gpu_util_pct"] != 10 {
		t.Errorf("sample = %v, want only gpu_* of device 1", got)
	}
	if _, err := newSampler(b, []int{7}); !errors.Is(err, monitor.ErrNotAvailable) {
		t.Errorf("device 7 of 2: err = %v", err)
	}
}

func TestSamplerEnergy(t *testing.T) {
	t0 := time.Unix(0, 0)
	t.Run("counter", func(t *testing.T) {
		b := twoGPUs()
		b.counter = []uint64{1_000_000, 5_000}
		s, _ := newSampler(b, nil)
		s.Start(t0)
		s.Sample(t0, nil)
		b.counter = []uint64{1_600_000, 205_000} // +600 J, +200 J
		s.Sample(t0.Add(2*time.Second), nil)
		tot, _ := s.Stop(t0.Add(2*time.Second), nil)
		got := values(tot)
		if got["gpu_energy_j"] != 800 || got["gpu0_energy_j"] != 600 || got["gpu1_energy_j"] != 200 || s.EnergySource() != "counter" {
			t.Errorf("energy = %v (%s), want 800 = 600 + 200 from the counter", got, s.EnergySource())
		}
	})
	t.Run("integrated", func(t *testing.T) {
		b := twoGPUs()
		s, _ := newSampler(b, nil)
		s.Start(t0)
		s.Sample(t0, nil)                    // 300 W and 100 W
		b.readings[0].PowerW = 500           // ramps to 500 W: trapezoid 400 W × 2 s
		s.Sample(t0.Add(2*time.Second), nil) //
		b.readings[1].PowerW = math.NaN()    // a missing reading is skipped
		s.Sample(t0.Add(3*time.Second), nil) // device 0: +500 J
		b.readings[1].PowerW = 100           //
		s.Sample(t0.Add(4*time.Second), nil) // device 0: +500 J; device 1: 100 W over 2 s
		tot, _ := s.Stop(t0.Add(4*time.Second), nil)
		got := values(tot)
		want := map[string]float64{"gpu_energy_j": 800 + 500 + 500 + 200 + 200, "gpu0_energy_j": 1800, "gpu1_energy_j": 400}
		if diff := cmp.Diff(want, got); diff != "" || s.EnergySource() != "integrated" {
			t.Errorf("energy (-want +got):\n%s", diff)
		}
	})
}

func TestSamplerReadError(t *testing.T) {
	b := twoGPUs()
	b.fail = errors.New("GPU is lost")
	s, _ := newSampler(b, nil)
	vs, err := s.Sample(time.Unix(0, 0), nil)
	if err == nil {
		t.Error("read error not reported")
	}
	for _, v := range vs {
		if !math.IsNaN(v.V) {
			t.Errorf("%s = %v after a failed read, want NaN (skipped by the recorder)", v.Name, v.V)
		}
	}
	s.Close()
	if !b.closed {
		t.Error("Close did not close the backend")
	}
}

func TestParseSMIInfo(t *testing.T) {
	b, err := os.ReadFile("testdata/info.csv")
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseSMIInfo(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []Info{
		{Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-5b1c9f6e-0e2a-4f4d-9d3b-6c3e2f1a7b01", MemoryMB: 81559, Driver: "550.54.15", PowerLimitW: 700, MIG: "disabled", ECC: "enabled", Source: "nvidia-smi"},
		{Index: 1, Name: "NVIDIA A100-SXM4-40GB", UUID: "GPU-0f2d4b1c-7a8e-4c3d-8e5f-1a2b3c4d5e6f", MemoryMB: 40960, Driver: "550.54.15", PowerLimitW: 400, MIG: "enabled", ECC: "enabled", Source: "nvidia-smi"},
		{Index: 2, Name: "Tesla T4", UUID: "GPU-9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d", MemoryMB: 15360, Driver: "550.54.15", PowerLimitW: 70, MIG: "", ECC: "disabled", Source: "nvidia-smi"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("info (-want +got):\n%s", diff)
	}
	if _, err := parseSMIInfo([]byte("0, only, three\n")); err == nil {
		t.Error("short line accepted")
	}
}

func TestParseSMISample(t *testing.T) {
	b, _ := os.ReadFile("testdata/sample.csv")
	rows, _ := readCSV(b)
	var got []Reading
	for _, r := range rows {
		line := ""
		for i, f := range r {
			if i > 0 {
				line += ", "
			}
			line += f
		}
		_, rd, err := parseSMISample(line)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rd)
	}
	nan := math.NaN()
	want := []Reading{
		{UtilPct: 97, MemUsedMB: 61234, PowerW: 652.31, TempC: 71, SMClockMHz: 1980, MemClockMHz: 2619},
		{UtilPct: 45, MemUsedMB: 12000, PowerW: 250.5, TempC: 60, SMClockMHz: 1410, MemClockMHz: 1215},
		{UtilPct: 0, MemUsedMB: 0, PowerW: nan, TempC: 38, SMClockMHz: nan, MemClockMHz: nan},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("readings (-want +got):\n%s", diff)
	}
	if _, _, err := parseSMISample("index, utilization.gpu"); err == nil {
		t.Error("header line accepted")
	}
}

func TestParseSMICUDA(t *testing.T) {
	b, _ := os.ReadFile("testdata/banner.txt")
	if got := parseSMICUDA(b); got != "12.4" {
		t.Errorf("CUDA = %q, want 12.4", got)
	}
}

// TestSMIFallback runs a fake nvidia-smi (a shell script) as the real backend would.
func TestSMIFallback(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake nvidia-smi is a shell script")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh for the fake nvidia-smi")
	}
	ctx := context.Background()
	s, err := Open(ctx, Config{NoNVML: true, SMIPath: "testdata/nvidia-smi", Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if d := s.Devices(); len(d) != 1 || d[0].CUDA != "12.4" || d[0].Name != "NVIDIA H100 80GB HBM3" {
		t.Errorf("devices = %+v", d)
	}
	if len(s.HelperPIDs()) != 1 {
		t.Errorf("helper pids = %v, want the nvidia-smi loop", s.HelperPIDs())
	}
	m := monitor.New([]monitor.Sampler{s}, monitor.WithInterval(20*time.Millisecond))
	m.Start()
	time.Sleep(300 * time.Millisecond)
	r := m.Stop()
	p, ok := r.Get("gpu_power_w")
	if !ok || p.Max != 100 {
		t.Fatalf("gpu_power_w = %+v, want 100 W (warnings %v)", p, r.Warnings)
	}
	e, _ := r.Get("gpu_energy_j")
	// 100 W integrated between the first and the last sample that had a reading.
	if e.Value <= 0 || e.Value > 100*r.Duration().Seconds()+1e-9 {
		t.Errorf("gpu_energy_j = %v over %v at 100 W", e.Value, r.Duration())
	}
}

func TestNoGPUIsNotAnError(t *testing.T) {
	_, err := Open(context.Background(), Config{NVMLPath: "/nonexistent/libnvidia-ml.so.1", SMIPath: "/nonexistent/nvidia-smi"})
	if !errors.Is(err, monitor.ErrNotAvailable) {
		t.Errorf("err = %v, want one wrapping monitor.ErrNotAvailable", err)
	}
	t.Logf("reason: %v", err)
}

func testTime(sec int) time.Time { return time.Unix(int64(sec), 0) }

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
