//go:build unix

package exec

import (
	osexec "os/exec"
	"syscall"

	"github.com/inferbench/inferbench/internal/procgroup"
)

// setProcessGroup runs the command in its own process group, so cancelling reaches its children.
func setProcessGroup(cmd *osexec.Cmd) {
	cmd.SysProcAttr = procgroup.Attr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
