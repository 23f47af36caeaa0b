//go:build unix && !linux

package procgroup

import "syscall"

// Attr returns the attributes of a process inferbench starts: its own process group (see the
// Linux version; other systems have no parent-death signal).
func Attr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
