//go:build unix

package recovery

import (
	"os"
	"syscall"
)

// Lock takes an exclusive lock on a run's open run.log for as long as the file stays open
// (the process's life at most).
func Lock(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// tryLockLog locks another run's run.log if no process holds it, and returns the unlock.
func tryLockLog(path string) (unlock func(), ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}
