//go:build !unix

package exec

import osexec "os/exec"

// setProcessGroup: without process groups, cancelling kills the command itself (the default of
// exec.CommandContext).
func setProcessGroup(cmd *osexec.Cmd) {}

// readNow is not used where pipes have no deadlines.
func readNow(fd uintptr, buf []byte) int { return 0 }
