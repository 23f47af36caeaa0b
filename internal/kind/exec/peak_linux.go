//go:build linux

package exec

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	osexec "os/exec"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The peak RSS of a command, on Linux: the high-water mark of the command's own memory, read
// while the kernel holds the process at its exit (a ptrace exit stop: the process is traced from
// its exec to its exit and detached there), or the largest of its children's, from the rusage of
// the reaped command, where that exceeds inferbench's own peak (below it, the figure may be
// inferbench's: see the note). A child smaller than inferbench's peak is not seen.
//
// Note: the rusage of the reaped child (ProcessState.SysUsage's Maxrss) is not the command's own
// figure. Go starts a command with vfork (CLONE_VM): until exec the child runs in inferbench's
// memory, and exec records that memory's high-water mark as the child's max RSS. `true` started
// from a process holding 100 MB reads 102 MB. The rusage figure is used only where ptrace is
// refused (a seccomp profile, Yama's ptrace_scope 3), and then only when it exceeds inferbench's
// own peak, the one case where it must be the command's.

// traceRefused is set when the kernel refused to trace a command: from then on commands run
// untraced.
var traceRefused atomic.Bool

// started is a command that is running.
type started struct {
	cmd    *osexec.Cmd
	traced bool // traced by the calling goroutine's thread, locked to it until wait returns
}

// start starts the command that build returns, traced when asked and the kernel permits.
func start(build func() *osexec.Cmd, trace bool) (*started, error) {
	if trace && !traceRefused.Load() {
		// ptrace requests come from the tracer, the thread that started the process.
		runtime.LockOSThread()
		cmd := build()
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Ptrace = true
		err := cmd.Start()
		if err == nil {
			return &started{cmd: cmd, traced: true}, nil
		}
		runtime.UnlockOSThread()
		if !errors.Is(err, syscall.EPERM) {
			return nil, err
		}
		traceRefused.Store(true)
	}
	cmd := build()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &started{cmd: cmd}, nil
}

// wait waits for the command to exit; peak is its own peak RSS in bytes, 0 when unknown.
func (s *started) wait() (peak float64, err error) {
	if s.traced {
		peak = follow(s.cmd.Process.Pid)
		runtime.UnlockOSThread()
	}
	err = s.cmd.Wait()
	if s.cmd.ProcessState != nil {
		// The rusage covers the command's own children too (a shell's): it raises the peak
		// where it is surely theirs or the command's, above inferbench's own peak.
		peak = max(peak, childMaxRSS(s.cmd.ProcessState))
	}
	return peak, err
}

// childInfo is the kernel's siginfo_t for SIGCHLD, as waitid fills it (128 bytes).
type childInfo struct {
	signo, errno, code int32
	_                  int32
	pid                int32
	uid                uint32
	status             int32
	_                  [100]byte
}

const cldTrapped = 4 // si_code of a ptrace stop

// follow lets a traced process run to its exit, passing on the signals it receives, and returns
// the high-water mark of its memory read at the exit stop (0 when it died without one, killed).
// It leaves the process to be reaped by Wait: every wait uses WNOWAIT.
func follow(pid int) float64 {
	optioned := false
	for {
		var si childInfo
		_, _, e := unix.Syscall6(unix.SYS_WAITID, unix.P_PID, uintptr(pid), uintptr(unsafe.Pointer(&si)),
			unix.WEXITED|unix.WSTOPPED|unix.WNOWAIT, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 || si.code != cldTrapped {
			return 0 // exited without an exit stop (SIGKILL): Wait reaps it
		}
		sig := int(si.status & 0xff)
		event := si.status >> 8
		switch {
		case sig == int(unix.SIGTRAP) && event == unix.PTRACE_EVENT_EXIT:
			peak := vmHWM(pid)
			_ = unix.PtraceDetach(pid)
			return peak
		case !optioned:
			// The first stop is the SIGTRAP of the exec that ptrace(TRACEME) asked for.
			if err := unix.PtraceSetOptions(pid, unix.PTRACE_O_TRACEEXIT|unix.PTRACE_O_TRACEEXEC|unix.PTRACE_O_EXITKILL); err != nil {
				_ = unix.PtraceDetach(pid)
				return 0
			}
			optioned = true
			if sig == int(unix.SIGTRAP) {
				sig = 0
			}
		case sig == int(unix.SIGTRAP) && event == unix.PTRACE_EVENT_EXEC:
			sig = 0 // a later exec: its image's mark is the one read at exit
		case groupStop(pid):
			sig = 0 // a stop signal the process already took: let it run on
		}
		if err := unix.PtraceCont(pid, sig); err != nil {
			_ = unix.PtraceDetach(pid)
			return 0
		}
	}
}

// groupStop reports whether a traced process's stop is a group stop (the stop of SIGSTOP and
// the like, after it was delivered) rather than a signal on its way: the kernel has no signal
// information for a group stop.
func groupStop(pid int) bool {
	var info [128]byte
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GETSIGINFO, uintptr(pid), 0, uintptr(unsafe.Pointer(&info)), 0, 0)
	return e == unix.EINVAL
}

// vmHWM reads a process's peak RSS (VmHWM, bytes) from /proc/PID/status; 0 when unreadable.
func vmHWM(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "VmHWM:" {
			kb, err := strconv.ParseFloat(string(f[1]), 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}
