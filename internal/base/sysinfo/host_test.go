package sysinfo

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
)

// TestCollectThisHost: the fingerprint of the machine running the test has its CPU model and
// memory. On macOS and Windows they were empty (read from /proc only), so compare's "different
// hardware" check worked on blanks; they come from sysctl and from the registry and
// GlobalMemoryStatusEx there now.
func TestCollectThisHost(t *testing.T) {
	switch runtime.GOOS {
	case "linux":
		if b, err := os.ReadFile("/proc/cpuinfo"); err != nil || !strings.Contains(string(b), "model name") {
			t.Skip("/proc/cpuinfo names no CPU model here (some arm64 kernels do not)")
		}
	case "darwin", "windows":
	default:
		t.Skipf("no source of the CPU model on %s", runtime.GOOS)
	}
	info := Collect(context.Background(), Options{GPUs: func(context.Context) []GPU { return nil }})
	if info.CPU.Model == "" || info.MemoryMB <= 0 || info.CPU.Cores <= 0 {
		t.Errorf("%s/%s: cpu %+v, memory %d MB: want the model, the cores and the memory", runtime.GOOS, runtime.GOARCH, info.CPU, info.MemoryMB)
	}
}
