//go:build unix

package monitor

import "syscall"

// reapedChildren returns the peak RSS (bytes) of the largest child the harness has reaped and
// the CPU seconds (user+system) of all of them, from getrusage(RUSAGE_CHILDREN).
func reapedChildren() (maxRSS, cpu float64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) != nil {
		return 0, 0
	}
	cpu = float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6 + float64(ru.Stime.Sec) + float64(ru.Stime.Usec)/1e6
	return float64(ru.Maxrss) * 1024, cpu // Linux reports ru_maxrss in kilobytes
}

// selfMaxRSS returns the harness's own peak RSS (bytes) over its life, from getrusage(RUSAGE_SELF).
func selfMaxRSS() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Maxrss) * 1024 // kilobytes on Linux, the only system with /proc here
}
