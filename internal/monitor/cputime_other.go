//go:build !linux

package monitor

import "time"

// costClock measures the wall time f takes where no thread CPU clock is available.
func costClock(f func()) (time.Duration, bool) {
	w := time.Now()
	f()
	return time.Since(w), false
}
