//go:build !linux

package gofunc

// threadCPU reports no thread CPU clock: cpu_ms is recorded on Linux only.
func threadCPU() (int64, bool) { return 0, false }
