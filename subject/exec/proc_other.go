//go:build !unix

package exec

import osexec "os/exec"

// setProcessGroup: without process groups, cancelling kills the command itself (the default of
// exec.CommandContext).
func setProcessGroup(cmd *osexec.Cmd) {}
