//go:build unix

package readall

import "syscall"

const openNonBlock = syscall.O_NONBLOCK
