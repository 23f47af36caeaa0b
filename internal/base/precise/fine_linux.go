package precise

import (
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Fine sleeps d (at most a few milliseconds) on a timerfd that the runtime's netpoller waits on.
// The runtime's timers are woken by epoll_wait, whose timeout has millisecond resolution, so a Go
// timer can fire up to a millisecond late when the process is idle; a timerfd ends that
// epoll_wait when it fires, within tens of microseconds.
//
// It does not sleep in nanosleep, which wakes as precisely, because a goroutine blocked in a
// system call costs the whole process: the runtime's monitor thread hands its processor to
// another thread and, having found a call to retake it from, polls every 20 µs from then on (a
// nanosleep and a context switch each time). At an open loop's sends and the mockserver's
// iterations (one every 0.5 ms) that polling was an eighth of a streamed request's CPU. Where no
// timerfd can be had it falls back to nanosleep.
func Fine(d time.Duration) {
	if d <= 0 {
		return
	}
	t := timerfds.get()
	if t == nil {
		nanosleep(d)
		return
	}
	if t.wait(d) {
		timerfds.put(t)
		return
	}
	// Refused, or the wait failed with the timer perhaps still armed: a timer in that state is
	// not one to hand the next wait, which could see this one's expiration.
	t.f.Close()
	nanosleep(d)
}

func nanosleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}

// timerfd is a one-shot timer file registered with the runtime's netpoller, with what a wait
// needs kept so that it allocates nothing.
type timerfd struct {
	f    *os.File
	rc   syscall.RawConn
	spec unix.ItimerSpec
	set  func(fd uintptr)
	read func(fd uintptr) bool
	buf  [8]byte // the expirations since the last read
	err  error
}

func newTimerfd(fd int) (*timerfd, error) {
	t := &timerfd{f: os.NewFile(uintptr(fd), "timerfd")} // non-blocking: the netpoller waits on it
	rc, err := t.f.SyscallConn()
	if err != nil {
		t.f.Close()
		return nil, err
	}
	t.rc = rc
	// Both calls return at once (the file is non-blocking): raw, they do not wake the runtime's
	// monitor thread either.
	t.set = func(fd uintptr) {
		t.err = nil
		if _, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&t.spec)), 0, 0, 0); e != 0 {
			t.err = e
		}
	}
	t.read = func(fd uintptr) bool {
		t.err = nil
		_, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&t.buf[0])), uintptr(len(t.buf)))
		if e != 0 {
			t.err = e
		}
		return e != unix.EAGAIN && e != unix.EINTR
	}
	return t, nil
}

// wait arms the timer d from now and waits for it to fire; false when the kernel refused.
func (t *timerfd) wait(d time.Duration) bool {
	t.spec.Value = unix.NsecToTimespec(int64(d))
	if err := t.rc.Control(t.set); err != nil || t.err != nil {
		return false
	}
	err := t.rc.Read(t.read)
	return err == nil && t.err == nil
}

// timerfdPool keeps the timerfds of waits that ended for the next: one for each goroutine waiting
// at once, up to keep of them idle.
type timerfdPool struct {
	mu     sync.Mutex
	free   []*timerfd
	failed bool // the kernel refused one: nanosleep from then on
}

var timerfds timerfdPool

const keep = 64

func (p *timerfdPool) get() *timerfd {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		t := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return t
	}
	failed := p.failed
	p.mu.Unlock()
	if failed {
		return nil
	}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	var t *timerfd
	if err == nil {
		t, err = newTimerfd(fd)
	}
	if err != nil {
		p.mu.Lock()
		p.failed = true
		p.mu.Unlock()
		return nil
	}
	return t
}

func (p *timerfdPool) put(t *timerfd) {
	p.mu.Lock()
	if len(p.free) < keep {
		p.free = append(p.free, t)
		t = nil
	}
	p.mu.Unlock()
	if t != nil {
		t.f.Close()
	}
}
