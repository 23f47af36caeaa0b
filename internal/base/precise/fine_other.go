//go:build !linux

package precise

import "time"

// Fine sleeps d; elsewhere than Linux the runtime's timer is used.
func Fine(d time.Duration) { time.Sleep(d) }
