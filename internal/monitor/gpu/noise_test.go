package gpu

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/internal/monitor"
	"github.com/inferbench/inferbench/result"
)

// noisy is a stub backend that also reports clock event reasons, processes and power limits.
type noisy struct {
	stub
	events   []uint64 // per sample, device 0
	at       int
	pids     []int
	enforced float64
	def      float64
}

func (n *noisy) clockEvents(i int) (uint64, bool) {
	e := n.events[min(n.at, len(n.events)-1)]
	n.at++
	return e, true
}
func (n *noisy) processes(int) ([]int, bool)              { return n.pids, true }
func (n *noisy) powerLimits(int) (float64, float64, bool) { return n.enforced, n.def, true }

func TestNoiseExplained(t *testing.T) {
	b := &noisy{
		stub: stub{devs: []Info{{Index: 0, Name: "H100"}}, readings: []Reading{{UtilPct: 99, SMClockMHz: 1980, MemClockMHz: 2619}}},
		// idle, then the power cap for 2 of 4 samples, then a thermal slowdown
		events:   []uint64{ReasonGPUIdle, ReasonSWPowerCap, ReasonSWPowerCap | ReasonHWThermalSlowdown, 0},
		pids:     []int{os.Getpid(), 1},
		enforced: 500, def: 700,
	}
	s, err := newSampler(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(100, 0)
	if err := s.Start(t0); err != nil {
		t.Fatal(err)
	}
	clocks := []float64{1980, 1410, 1200, 1755}
	for i, c := range clocks {
		b.readings[0].SMClockMHz = c
		if _, err := s.Sample(t0.Add(time.Duration(i)*100*time.Millisecond), nil); err != nil {
			t.Fatal(err)
		}
	}
	var d result.ResourceDetails
	warnings := s.Explain(&d)
	n := d.GPUNoise
	if n == nil {
		t.Fatal("no gpu_noise")
	}
	if n.Samples != 4 || n.SMClockMinMHz != 1200 || n.SMClockMaxMHz != 1980 || n.MemClockMaxMHz != 2619 {
		t.Errorf("noise %+v", n)
	}
	if diff := cmp.Diff(map[string]int{"gpu_idle": 1, "sw_power_cap": 2, "hw_thermal_slowdown": 1}, n.Reasons); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	if len(n.Processes) != 2 || !strings.HasPrefix(n.Processes[0], "1 ") {
		t.Errorf("processes %v", n.Processes)
	}
	all := strings.Join(warnings, "\n")
	for _, want := range []string{"sw_power_cap in 50% of samples", "hw_thermal_slowdown in 25%", "SM clock 1200-1980 MHz", "2 processes used the GPU", "power limit 500 W is below the default 700 W"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "gpu_idle") {
		t.Errorf("idle is not a cause of noise:\n%s", all)
	}
}

func TestNoiseQuiet(t *testing.T) {
	// A steady GPU, one process, default power: nothing to warn about.
	b := &noisy{stub: stub{devs: []Info{{Index: 0}}, readings: []Reading{{SMClockMHz: 1980, MemClockMHz: 2619}}},
		events: []uint64{0}, pids: []int{os.Getpid()}, enforced: 700, def: 700}
	s, _ := newSampler(b, nil)
	s.Start(time.Now())
	for range 3 {
		s.Sample(time.Now(), nil)
	}
	if w := s.Explain(new(result.ResourceDetails)); len(w) != 0 {
		t.Errorf("warnings %v", w)
	}
	// Without NVML (nvidia-smi), the clock range still shows and the report says what is unknown.
	b2 := &stub{devs: []Info{{Index: 0}}, readings: []Reading{{SMClockMHz: 1000}}}
	s2, _ := newSampler(b2, nil)
	s2.Start(time.Now())
	s2.Sample(time.Now(), nil)
	b2.readings[0].SMClockMHz = 1900
	s2.Sample(time.Now(), nil)
	var d result.ResourceDetails
	w := s2.Explain(&d)
	if n := d.GPUNoise; n == nil || n.Unavailable == "" || n.SMClockMinMHz != 1000 {
		t.Errorf("smi noise %+v", n)
	}
	if len(w) != 1 || !strings.Contains(w[0], "SM clock ranged 1000-1900 MHz") {
		t.Errorf("warnings %v", w)
	}
}

// TestMonitorCarriesNoise: a Monitor over the GPU sampler puts the noise under Details and its
// warnings in the report.
func TestMonitorCarriesNoise(t *testing.T) {
	b := &noisy{stub: stub{devs: []Info{{Index: 0}}, readings: []Reading{{SMClockMHz: 1980}}},
		events: []uint64{ReasonHWSlowdown}, pids: []int{1}, enforced: 700, def: 700}
	s, _ := newSampler(b, nil)
	m := monitor.New([]monitor.Sampler{s}, monitor.WithInterval(time.Millisecond))
	m.Start()
	time.Sleep(5 * time.Millisecond)
	r := m.Stop()
	if r.Details == nil || r.Details.GPUNoise == nil {
		t.Fatalf("details %v", r.Details)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "hw_slowdown") {
		t.Errorf("warnings %v", r.Warnings)
	}
}
