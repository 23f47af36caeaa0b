//go:build unix

package run

import (
	"os"
	"syscall"
)

// lockRunLog takes an exclusive lock on the run's open run.log for as long as the file stays open
// (the process's life at most).
func lockRunLog(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// tryLockRunLog locks another run's run.log if no process holds it, and returns the unlock.
func tryLockRunLog(path string) (unlock func(), ok bool) {
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
