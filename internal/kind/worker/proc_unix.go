//go:build unix

package worker

import (
	"os/exec"
	"syscall"

	"github.com/inferbench/inferbench/internal/base/procgroup"
)

// setProcessGroup puts the worker in its own process group, so that a kill reaches the children
// it starts (compiler processes, data loaders) and a terminal's Ctrl-C reaches only inferbench,
// which then stops the worker in order.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = procgroup.Attr()
}

// killGroup kills the worker's process group.
func killGroup(cmd *exec.Cmd) {
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		cmd.Process.Kill() //nolint:errcheck // it may have exited already
	}
}
