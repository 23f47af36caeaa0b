//go:build !linux

package monitor

// child is only started by tests that run on Linux (startChild skips elsewhere).
func child(mode string) int { return 1 }
