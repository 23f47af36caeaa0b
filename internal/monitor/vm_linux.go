package monitor

import (
	"os"

	"golang.org/x/sys/unix"
)

// sharesMemoryWithSelf reports whether pid uses the harness's address space, from kcmp(2)
// (KCMP_VM). Where the kernel lacks kcmp or refuses it, it reports false: such a child is
// sampled as it is, between fork and exec included.
func sharesMemoryWithSelf(pid int) bool {
	const kcmpVM = 1
	r, _, e := unix.Syscall6(unix.SYS_KCMP, uintptr(os.Getpid()), uintptr(pid), kcmpVM, 0, 0, 0)
	return e == 0 && r == 0
}
