//go:build linux

package monitor

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time of the calling OS thread; ok is false when the clock is absent.
func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// costClock measures the CPU the sampling code uses: the goroutine is locked to its thread while
// it samples, and the thread's CPU clock read before and after.
func costClock(f func()) (time.Duration, bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, ok := threadCPU()
	if !ok {
		w := time.Now()
		f()
		return time.Since(w), false
	}
	f()
	t1, _ := threadCPU()
	return t1 - t0, true
}
