//go:build !unix

package worker

import "os/exec"

func setProcessGroup(cmd *exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {
	cmd.Process.Kill() //nolint:errcheck // it may have exited already
}
