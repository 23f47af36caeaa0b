package monitor

import (
	"testing"
	"time"
)

func TestSystemSampler(t *testing.T) {
	dir := t.TempDir()
	writeFakeProc(t, dir, 10)
	writeSystemFiles(t, dir, 1000, 3000, 200)
	s, err := NewSystemSampler(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Start(time.Unix(0, 0))
	first, err := s.Sample(time.Unix(0, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := values(first)["sys_cpu_pct"]; ok {
		t.Error("CPU utilisation reported from a single reading")
	}
	// 300 ticks busy (user 200 + system 100), 100 idle: 75%.
	writeSystemFiles(t, dir, 1200, 3100, 300)
	vs, err := s.Sample(time.Unix(1, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := values(vs)
	for name, want := range map[string]float64{"sys_cpu_pct": 75, "sys_mem_used_mb": 2000000.0 / 1024, "sys_load1": 1.5} {
		if !near(got[name], want, 1e-9) {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
}

func TestSystemSamplerTestdata(t *testing.T) {
	s, err := NewSystemSampler("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	vs, err := s.Sample(time.Unix(0, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := values(vs)["sys_load1"]; got != 1.5 {
		t.Errorf("sys_load1 = %v, want 1.5", got)
	}
}
