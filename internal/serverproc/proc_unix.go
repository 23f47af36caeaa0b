//go:build unix

package serverproc

import (
	"os/exec"
	"syscall"

	"github.com/inferbench/inferbench/internal/base/procgroup"
)

// setProcessGroup puts the server in its own process group, so teardown reaches its children
// (a server's workers) too.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = procgroup.Attr()
}

// terminate signals the server's process group.
func terminate(cmd *exec.Cmd, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}
