package monitor

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestNoProcNotAvailable: where there is no procfs (macOS, Windows; here a missing mount point on
// Linux), the process and system monitors are absent and the run's report says "not available"
// for each, with no sample and no failed reading. Off Linux the test opens the real default
// roots, so it checks the platform itself.
func TestNoProcNotAvailable(t *testing.T) {
	cfg := Config{Interval: 10 * time.Millisecond}
	if runtime.GOOS == "linux" {
		cfg.ProcRoot = filepath.Join(t.TempDir(), "no-proc")
		cfg.SysRoot = filepath.Join(t.TempDir(), "no-sys")
	}
	s := Open(context.Background(), cfg)
	defer s.Close()
	if len(s.Samplers()) != 0 {
		t.Errorf("samplers opened without procfs: %v", s.Samplers())
	}
	for _, err := range s.Unavailable() {
		if !errors.Is(err, ErrNotAvailable) {
			t.Errorf("unavailable %v does not wrap ErrNotAvailable", err)
		}
	}
	m := s.Monitor(nil)
	m.Start()
	r := m.Stop()
	got := strings.Join(r.Unavailable, "\n")
	for _, want := range []string{"process monitor: not available", "system monitor: not available", "rapl: not available"} {
		if !strings.Contains(got, want) {
			t.Errorf("report's unavailable %q lacks %q", r.Unavailable, want)
		}
	}
	if len(r.Warnings) != 0 {
		t.Errorf("warnings %q: an absent source is not a failed reading", r.Warnings)
	}
}
