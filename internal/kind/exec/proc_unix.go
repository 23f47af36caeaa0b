//go:build unix

package exec

import (
	osexec "os/exec"
	"syscall"

	"github.com/inferbench/inferbench/internal/base/procgroup"
)

// setProcessGroup runs the command in its own process group, so cancelling reaches its children.
func setProcessGroup(cmd *osexec.Cmd) {
	cmd.SysProcAttr = procgroup.Attr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// readNow reads what a non-blocking descriptor holds now: 0 when empty, at EOF or on error.
func readNow(fd uintptr, buf []byte) int {
	n, err := syscall.Read(int(fd), buf)
	if err != nil {
		return 0
	}
	return n
}
