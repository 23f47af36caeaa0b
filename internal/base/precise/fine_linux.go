package precise

import (
	"syscall"
	"time"
)

// Fine sleeps d (at most a few milliseconds) in the kernel. The runtime's timers are woken by
// epoll_wait, whose timeout has millisecond resolution, so a Go timer can fire up to a millisecond
// late when the process is idle; nanosleep wakes within tens of microseconds.
func Fine(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
