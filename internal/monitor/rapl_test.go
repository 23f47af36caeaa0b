//go:build linux

package monitor

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// copyTree copies testdata/sys to a temporary directory so tests can move the counters.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func setEnergy(t *testing.T, root, zone string, uj uint64) {
	t.Helper()
	p := filepath.Join(root, "class/powercap", zone, "energy_uj")
	if err := os.WriteFile(p, []byte(strconv.FormatUint(uj, 10)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRAPLSampler(t *testing.T) {
	root := copyTree(t, "testdata/sys")
	s, err := NewRAPLSampler(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.pkg) != 2 || len(s.dram) != 2 {
		t.Fatalf("zones: %d package, %d dram; want 2 and 2 (mmio, core and psys left out)", len(s.pkg), len(s.dram))
	}
	// Package 1 is 5 J short of its range.
	setEnergy(t, root, "intel-rapl:1", 262143328850-5e6)
	t0 := time.Unix(0, 0)
	s.Start(t0)
	if _, err := s.Sample(t0, nil); err != nil {
		t.Fatal(err)
	}
	// +2 s: package 0 +30 J; package 1 wraps and adds 20 J; DRAM 0 +4 J. The mmio and psys
	// zones move too and must not count.
	setEnergy(t, root, "intel-rapl:0", 1000000+30e6)
	setEnergy(t, root, "intel-rapl:1", 15e6)
	setEnergy(t, root, "intel-rapl:0:1", 200000+4e6)
	setEnergy(t, root, "intel-rapl-mmio:0", 1000000+30e6)
	setEnergy(t, root, "intel-rapl:2", 9000000+99e6)
	wrap := 20.0 // package 1: 5 J to the end of the range, then 15 J
	vs, err := s.Sample(t0.Add(2*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := values(vs)
	if want := (30 + wrap) / 2; !near(got["cpu_power_w"], want, 1e-6) {
		t.Errorf("cpu_power_w = %v, want %v", got["cpu_power_w"], want)
	}
	if !near(got["dram_power_w"], 2, 1e-9) {
		t.Errorf("dram_power_w = %v, want 2", got["dram_power_w"])
	}
	tot, _ := s.Stop(t0.Add(2*time.Second), nil)
	gt := values(tot)
	if !near(gt["cpu_energy_j"], 30+wrap, 1e-6) || !near(gt["dram_energy_j"], 4, 1e-9) {
		t.Errorf("totals = %v", gt)
	}
}

func TestRAPLNotAvailable(t *testing.T) {
	for _, tc := range []struct{ name, root string }{
		{"no powercap", t.TempDir()},
		{"no such root", "testdata/nothing-here"},
	} {
		_, err := NewRAPLSampler(tc.root)
		if !errors.Is(err, ErrNotAvailable) {
			t.Errorf("%s: err = %v, want ErrNotAvailable", tc.name, err)
		}
	}
}
