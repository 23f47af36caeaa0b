//go:build unix

package gofunc

import (
	"os/exec"

	"github.com/inferbench/inferbench/internal/base/procgroup"
)

// ownGroup starts the counted process in a process group of its own, which the second Ctrl-C
// kills (procgroup).
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = procgroup.Attr() }
