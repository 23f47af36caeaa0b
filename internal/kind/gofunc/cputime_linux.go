package gofunc

import "golang.org/x/sys/unix"

// threadCPU returns the calling thread's CPU time (user + system) in nanoseconds.
func threadCPU() (int64, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return ts.Nano(), true
}
