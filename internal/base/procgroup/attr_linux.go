package procgroup

import "syscall"

// Attr returns the attributes of a process inferbench starts: its own process group (so that a
// terminal's Ctrl-C reaches only inferbench, and a kill reaches the process's own children), and
// on Linux SIGKILL when inferbench dies. KillAll covers the exits inferbench sees; the parent-death
// signal covers the ones it does not (SIGKILL, the OOM killer, a crash), after which a worker
// holding a GPU, a server holding its port or a command would otherwise run on, parented to init.
//
// Note: the kernel sends the signal when the thread that started the process exits. Go ends a
// thread only when a goroutine locked to it with runtime.LockOSThread returns without unlocking;
// inferbench starts no process from such a goroutine. The signal reaches the process itself, not
// its children: those die with it when they watch their parent (servers' workers usually do) or
// stay, as under any other parent.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
