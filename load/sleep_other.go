//go:build !linux

package load

import "time"

// sleepFine sleeps d; elsewhere than Linux the runtime's timer is used.
func sleepFine(d time.Duration) { time.Sleep(d) }
